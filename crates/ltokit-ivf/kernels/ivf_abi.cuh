// The symbols that cross fragment boundaries in the IVF-Flat kernels. Every variant of a
// device-function fragment defines the same symbol; choosing the fragment chooses the
// behaviour, and nvJitLink inlines it into the entry kernel.
#pragma once

// Copies one query (`dim` values of the list's type, as stored) into shared memory in the
// form ivf_dist reads (f32 for float types, the stored bytes for 8-bit types); thread
// `tid` of `nthreads` does its share and returns its part of the query's squared norm
// (fragment dist_<dtype>_v<veclen>_<metric>).
extern "C" __device__ float ivf_stage_query(const unsigned char* src, unsigned char* staged, int dim, int tid, int nthreads);

// Distance accumulator of one row of a 32-row interleaved group against the staged query
// (same fragment). For dot-product metrics it also returns the row's squared norm (cosine
// needs it). 8-bit types accumulate exactly in 32-bit integers (__dp4a).
extern "C" __device__ float ivf_dist(const unsigned char* group, int lane, const unsigned char* staged, int dim, float* xnorm2);

// Whether source id `id` is kept for query `query` (fragment filter_<kind>).
extern "C" __device__ bool ivf_keep(long long id, int query, const unsigned int* filter, long long words);

// Accumulator → score where smaller is better, and score → reported distance
// (fragment metric_<metric>).
extern "C" __device__ float ivf_score(float acc, float qnorm2, float xnorm2);
extern "C" __device__ float ivf_report(float score);
