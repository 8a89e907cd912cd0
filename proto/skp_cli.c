#include "skp_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int skp_cli_pair(const char *s, char sep, long *a, long *b)
{
    char *end;
    *a = strtol(s, &end, 10);
    if (end == s || *end != sep)
        return -1;
    const char *t = end + 1;
    *b = strtol(t, &end, 10);
    return end == t || *end ? -1 : 0;
}

int skp_cli_color(const char *s, uint8_t out[4])
{
    size_t n = strlen(s);
    if ((n != 6 && n != 8) || strspn(s, "0123456789abcdefABCDEF") != n)
        return -1;
    unsigned long v = strtoul(s, NULL, 16);
    if (n == 6)
        v = v << 8 | 0xff;
    for (int c = 0; c < 4; c++)
        out[c] = (uint8_t)(v >> (24 - 8 * c));
    return 0;
}

bool skp_cli_frame_pattern(const char *s)
{
    int conversions = 0;
    for (; *s; s++) {
        if (*s != '%')
            continue;
        if (s[1] == '%') {
            s++;
            continue;
        }
        s++;
        while (*s && strchr("0123456789-+ ", *s))
            s++;
        if (*s != 'd')
            return false;
        conversions++;
    }
    return conversions == 1;
}

int skp_cli_out_path(char *buf, size_t cap, const char *output, bool pattern, long frame,
                     const char *suffix)
{
    int n;
    /* A pattern holds exactly one integer conversion (skp_cli_frame_pattern). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    n = pattern ? snprintf(buf, cap, output, (int)frame) : snprintf(buf, cap, "%s", output);
#pragma GCC diagnostic pop
    if (n < 0 || (size_t)n >= cap)
        return -1;
    int m = snprintf(buf + n, cap - (size_t)n, "%s", suffix);
    return m < 0 || (size_t)m >= cap - (size_t)n ? -1 : 0;
}

size_t skp_json_quote(char *buf, size_t cap, const char *s)
{
    size_t len = 0;
    char tmp[8];
    for (int pass = 0; pass < 3; pass++) {
        const char *piece = "\"";
        if (pass == 1) {
            for (; *s; s++) {
                unsigned char ch = (unsigned char)*s;
                if (ch == '"' || ch == '\\')
                    snprintf(tmp, sizeof tmp, "\\%c", ch);
                else if (ch < 0x20)
                    snprintf(tmp, sizeof tmp, "\\u%04x", ch);
                else
                    snprintf(tmp, sizeof tmp, "%c", ch);
                for (const char *p = tmp; *p; p++, len++)
                    if (len + 1 < cap)
                        buf[len] = *p;
            }
            continue;
        }
        if (len + 1 < cap)
            buf[len] = *piece;
        len++;
    }
    if (cap)
        buf[len < cap ? len : cap - 1] = 0;
    return len;
}

char *skp_json_quoted(const char *s, char *small, size_t cap)
{
    size_t n = skp_json_quote(small, cap, s);
    if (n < cap)
        return small;
    char *buf = malloc(n + 1);
    if (buf)
        skp_json_quote(buf, n + 1, s);
    return buf;
}

size_t skp_cli_progress(char *buf, size_t cap, long done, long total)
{
    int width = 40, fill = total > 0 ? (int)(done * width / total) : width;
    int n = snprintf(buf, cap, "\r[%.*s%*s] %ld/%ld%s", fill,
                     "########################################", width - fill, "", done, total,
                     done == total ? "\n" : "");
    return n > 0 ? (size_t)n : 0;
}
