// mma.sync building blocks (sm_80 on) shared by the list-major scan's tensor-core tiles
// (lmtile.cu) and the coarse search's score matrices (coarse_mma.cu, coarse_h16.cu):
// fragment loads with ldmatrix, f32 products as 3xTF32, f16 products.
//
// A k step is 32 bytes of each row: 8 f32 (m16n8k8 TF32), 16 f16 (m16n8k16) or 32 8-bit
// values (m16n8k32). ldmatrix hands lane l the 32-bit word (row l / 4, word l % 4) of each
// 8 × 8 matrix of 16-bit values — an 8-row × 16-byte block — and that is the mma's A and
// B register layout for all three forms (a TF32 value, an f16 pair, an 8-bit quadruple).
#pragma once

__device__ __forceinline__ unsigned mma_shared_address(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}
// A: four 8 × 8 matrices, lanes 8j .. 8j + 7 giving matrix j's row addresses.
__device__ __forceinline__ void mma_ldsm_x4(unsigned (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(mma_shared_address(p)));
}
// B: two 8 × 8 matrices, lanes 0 .. 15 giving the row addresses.
__device__ __forceinline__ void mma_ldsm_x2(unsigned& r0, unsigned& r1, const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r0), "=r"(r1)
                 : "r"(mma_shared_address(p)));
}

// A function `name` for c += a · b by one mma.sync of `form` with an accumulator of four
// registers of type ACC (register constraint CONSTRAINT), A of four and B of two (every
// form used here); MMA_M16N8_F32 for the f32 accumulators.
#define MMA_M16N8(name, form, ACC, CONSTRAINT)                                                   \
    __device__ __forceinline__ void name(ACC (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) { \
        asm volatile("mma.sync.aligned." form " "                                                \
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"           \
                     : "+" CONSTRAINT(c[0]), "+" CONSTRAINT(c[1]), "+" CONSTRAINT(c[2]),         \
                       "+" CONSTRAINT(c[3])                                                      \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));            \
    }
#define MMA_M16N8_F32(name, form) MMA_M16N8(name, form, float, "f")

// 3xTF32 (mma.sync m16n8k8): each operand is split into its TF32 part (the f32 bits with
// the low 13 mantissa bits cleared) and the rest (exact in f32, which the tensor core
// truncates to TF32 in turn: |v − big − small| ≤ 2^-20 |v|), and the product is formed as
// small·big + big·small + big·big with f32 accumulation: the dropped small·small term and
// the truncations leave a relative error of a few 2^-20 of Σ|a_d b_d| — the order of
// f32's own rounding over a long sum — at three tensor-core instructions for each 16 × 8
// × 8 block of products. (cvt.rna.tf32.f32 would round instead of truncating, but sm_90
// runs it as a dozen integer instructions, which cost more than the products.)
// The f32 bits v's TF32 part and the rest, as the mma's .tf32 operands.
__device__ __forceinline__ void mma_split(unsigned v, unsigned& big, unsigned& small) {
    big = v & 0xffffe000u;
    small = __float_as_uint(__uint_as_float(v) - __uint_as_float(big));
}
MMA_M16N8_F32(mma_tf32, "m16n8k8.row.col.f32.tf32.tf32.f32")
// c += a · b, one m16n8k16 f16 product with f32 accumulation (the coarse search's f16
// score matrix, kernels/coarse_h16.cu).
MMA_M16N8_F32(mma_f16, "m16n8k16.row.col.f32.f16.f16.f32")
// An operand of N registers (A: 4, B: 2) split into TF32 parts, once per k step however
// many products use it.
template <int N> struct MmaSplit { unsigned big[N], small[N]; };
template <int N>
__device__ __forceinline__ MmaSplit<N> mma_split_all(const unsigned (&v)[N]) {
    MmaSplit<N> s;
    #pragma unroll
    for (int i = 0; i < N; ++i) mma_split(v[i], s.big[i], s.small[i]);
    return s;
}
// c += a · b as three TF32 products (small terms first: they are added to the
// accumulator before the big one).
__device__ __forceinline__ void mma_3xtf32(float (&c)[4], const MmaSplit<4>& a, const MmaSplit<2>& b) {
    mma_tf32(c, a.small, b.big[0], b.big[1]);
    mma_tf32(c, a.big, b.small[0], b.small[1]);
    mma_tf32(c, a.big, b.big[0], b.big[1]);
}
// c += a · b where every value of a is exact in TF32 (a.small would be zero: f16 and
// 8-bit values as f32): the two products of mma_3xtf32 that remain, in its order — the
// same sums, bit for bit, at two tensor-core instructions instead of three.
__device__ __forceinline__ void mma_2xtf32(float (&c)[4], const unsigned (&a)[4], const MmaSplit<2>& b) {
    mma_tf32(c, a, b.small[0], b.small[1]);
    mma_tf32(c, a, b.big[0], b.big[1]);
}
