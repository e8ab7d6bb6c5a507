// Device fragment: the activation, chosen at build time by ADOPTER_ACT_<name>.
extern "C" __device__ float adopter_activation(float v) {
#if defined(ADOPTER_ACT_relu)
    return v > 0.0f ? v : 0.0f;
#elif defined(ADOPTER_ACT_square)
    return v * v;
#else
    return v;
#endif
}
