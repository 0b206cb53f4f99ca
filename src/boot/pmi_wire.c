/*
 * pmi_wire.c — PMI-1 lines, hex values and process mappings (pmi_wire.h).
 */
#include "boot/pmi_wire.h"

#include <stdlib.h>
#include <string.h>

#include "proust.h"

/* Reply bytes: at most PROUST__PMI_LINE_MAX, all printable. */
static int check_bytes(const char *line, size_t len, const char **why)
{
    if (len > PROUST__PMI_LINE_MAX) {
        *why = "reply line too long";
        return PROUST_ERR_PROTO;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)line[i];
        if (c < 0x20 || c > 0x7e) {
            *why = "unprintable byte in a reply";
            return PROUST_ERR_PROTO;
        }
    }
    return PROUST_OK;
}

/* One "key=value" word into msg (cut at its first '='). */
static int add_word(struct proust__pmi_msg *msg, char *word, const char **why)
{
    if (msg->nwords == PROUST__PMI_WORDS_MAX) {
        *why = "too many words in a reply";
        return PROUST_ERR_PROTO;
    }
    char *eq = strchr(word, '=');
    if (!eq || eq == word) {
        *why = "a word of a reply is not key=value";
        return PROUST_ERR_PROTO;
    }
    *eq = '\0';
    msg->key[msg->nwords] = word;
    msg->value[msg->nwords] = eq + 1;
    msg->nwords++;
    return PROUST_OK;
}

static int first_is_cmd(const struct proust__pmi_msg *msg, const char **why)
{
    if (msg->nwords == 0 || strcmp(msg->key[0], "cmd") != 0 || !msg->value[0][0]) {
        *why = "reply without cmd=";
        return PROUST_ERR_PROTO;
    }
    return PROUST_OK;
}

int proust__pmi2_parse(const char *text, size_t len, struct proust__pmi_msg *msg,
                       const char **why)
{
    msg->nwords = 0;
    if (check_bytes(text, len, why) != PROUST_OK)
        return PROUST_ERR_PROTO;
    /* words end at ';', and ";;" is a ';' inside a value: unescape into
     * buf with each word NUL-terminated */
    size_t o = 0, start = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == ';' && i + 1 < len && text[i + 1] == ';') {
            msg->buf[o++] = ';';
            i++;
        } else if (text[i] == ';') {
            msg->buf[o++] = '\0';
            if (o - 1 > start && add_word(msg, msg->buf + start, why) != PROUST_OK)
                return PROUST_ERR_PROTO;
            start = o;
        } else {
            msg->buf[o++] = text[i];
        }
    }
    msg->buf[o] = '\0';
    if (o > start && add_word(msg, msg->buf + start, why) != PROUST_OK)
        return PROUST_ERR_PROTO;
    return first_is_cmd(msg, why);
}

int proust__pmi_parse(const char *line, size_t len, struct proust__pmi_msg *msg,
                      const char **why)
{
    msg->nwords = 0;
    if (check_bytes(line, len, why) != PROUST_OK)
        return PROUST_ERR_PROTO;
    memcpy(msg->buf, line, len);
    msg->buf[len] = '\0';
    char *p = msg->buf;
    while (*p) {
        while (*p == ' ')
            *p++ = '\0';
        if (!*p)
            break;
        char *word = p;
        while (*p && *p != ' ')
            p++;
        if (*p)
            *p++ = '\0';
        if (add_word(msg, word, why) != PROUST_OK)
            return PROUST_ERR_PROTO;
    }
    return first_is_cmd(msg, why);
}

const char *proust__pmi_get(const struct proust__pmi_msg *msg, const char *key)
{
    for (int i = 1; i < msg->nwords; i++)
        if (strcmp(msg->key[i], key) == 0)
            return msg->value[i];
    return NULL;
}

int proust__pmi_is(const struct proust__pmi_msg *msg, const char *cmd)
{
    return msg->nwords > 0 && strcmp(msg->value[0], cmd) == 0;
}

void proust__pmi_hex_encode(const void *data, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = data;
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * len] = '\0';
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

long proust__pmi_hex_decode(const char *hex, void *out, size_t cap)
{
    size_t n = strlen(hex);
    if (n % 2 || n / 2 > cap)
        return -1;
    unsigned char *b = out;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        b[i] = (unsigned char)(hi << 4 | lo);
    }
    return (long)(n / 2);
}

/* A non-negative decimal at *p, at most `max`; advances *p. -1 if none. */
static long read_count(const char **p, long max)
{
    const char *s = *p;
    long v = 0;
    if (*s < '0' || *s > '9')
        return -1;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s++ - '0');
        if (v > max)
            return -1;
    }
    *p = s;
    return v;
}

#define MAPPING_BLOCKS_MAX 1024

int proust__pmi_parse_mapping(const char *text, int size, int *node)
{
    long block[MAPPING_BLOCKS_MAX][3];
    int nblocks = 0;
    const char *p = text;
    if (size <= 0 || strncmp(p, "(vector", 7) != 0)
        return PROUST_ERR_PROTO;
    p += 7;
    while (*p == ',') {
        p++;
        if (*p++ != '(' || nblocks == MAPPING_BLOCKS_MAX)
            return PROUST_ERR_PROTO;
        for (int k = 0; k < 3; k++) {
            if (k && *p++ != ',')
                return PROUST_ERR_PROTO;
            if ((block[nblocks][k] = read_count(&p, 1 << 24)) < 0)
                return PROUST_ERR_PROTO;
        }
        if (*p++ != ')')
            return PROUST_ERR_PROTO;
        nblocks++;
    }
    if (*p++ != ')' || *p != '\0' || nblocks == 0)
        return PROUST_ERR_PROTO;
    /* the blocks repeat (a cyclic mapping is one short pattern) until
     * every rank has a node */
    int rank = 0;
    while (rank < size) {
        int before = rank;
        for (int b = 0; b < nblocks && rank < size; b++)
            for (long n = 0; n < block[b][1] && rank < size; n++)
                for (long r = 0; r < block[b][2] && rank < size; r++)
                    node[rank++] = (int)(block[b][0] + n);
        if (rank == before)
            return PROUST_ERR_PROTO; /* a pattern of no ranks */
    }
    return PROUST_OK;
}
