// Device-function fragment: how an accumulator becomes a score (smaller is better) and
// how a score is reported. Define IVF_METRIC_{l2,l2sqrt,ip,cosine}.
#include "ivf_abi.cuh"

extern "C" __device__ float ivf_score(float acc, float qnorm2, float xnorm2) {
#if defined(IVF_METRIC_ip)
    return -acc;
#elif defined(IVF_METRIC_cosine)
    float denom = sqrtf(qnorm2) * sqrtf(xnorm2);
    return denom > 0.f ? 1.f - acc / denom : 1.f;
#else
    return acc;
#endif
}

extern "C" __device__ float ivf_report(float score) {
#if defined(IVF_METRIC_l2sqrt)
    return sqrtf(fmaxf(score, 0.f));
#elif defined(IVF_METRIC_ip)
    return -score;
#else
    return score;
#endif
}

extern "C" __device__ bool ivf_metric_l2() {
#if defined(IVF_METRIC_l2) || defined(IVF_METRIC_l2sqrt)
    return true;
#else
    return false;
#endif
}

extern "C" __device__ bool ivf_score_linear() {
#if defined(IVF_METRIC_cosine)
    return false;
#else
    return true;
#endif
}
