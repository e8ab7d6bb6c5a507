// The symbols that cross fragment boundaries in the IVF-Flat kernels. Every variant of a
// device-function fragment defines the same symbol; choosing the fragment chooses the
// behaviour, and nvJitLink inlines it into the entry kernel.
#pragma once

// Distance accumulator of one row of a 32-row interleaved group against the query in
// shared memory (fragment dist_<dtype>_v<veclen>_<metric>). For dot-product metrics it
// also returns the row's squared norm (cosine needs it).
extern "C" __device__ float ivf_dist(const unsigned char* group, int lane, const float* q, int dim, float* xnorm2);

// Whether source id `id` is kept for query `query` (fragment filter_<kind>).
extern "C" __device__ bool ivf_keep(long long id, int query, const unsigned int* filter, long long words);

// Accumulator → score where smaller is better, and score → reported distance
// (fragment metric_<metric>).
extern "C" __device__ float ivf_score(float acc, float qnorm2, float xnorm2);
extern "C" __device__ float ivf_report(float score);
