/* SPDX-License-Identifier: MIT */
/* What the tools write for other programs to read: JSON and XML text
 * (output.h). */
#include "config.h"

#include "output.h"

#include <math.h>

size_t utf8_length(const unsigned char *s)
{
    unsigned char lo = 0x80, hi = 0xBF;
    size_t n;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF)
        n = 3, lo = s[0] == 0xE0 ? 0xA0 : 0x80, hi = s[0] == 0xED ? 0x9F : 0xBF;
    else if (s[0] >= 0xF0 && s[0] <= 0xF4)
        n = 4, lo = s[0] == 0xF0 ? 0x90 : 0x80, hi = s[0] == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (s[1] < lo || s[1] > hi) /* a NUL here fails too: no read past the end */
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

void xml_text(FILE *out, const char *str)
{
    static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        size_t n = utf8_length(s);
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        default:
            if (n == 0 || (*s < 0x20 && *s != '\t' && *s != '\n'))
                fputs(replacement, out); /* XML 1.0 allows no other control character */
            else
                fwrite(s, 1, n, out);
        }
        s += n ? n : 1;
    }
}

/* A JSON string: quotes, backslashes and control characters escaped, and
 * each invalid UTF-8 byte replaced by U+FFFD. JSON must be UTF-8 (Python's
 * json module rejects anything else) and driver strings promise nothing. */
static void json_write_string(FILE *out, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', out);
    while (*s) {
        size_t n = utf8_length(s);
        if (*s == '"' || *s == '\\')
            fprintf(out, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", out);
        else if (*s == '\t')
            fputs("\\t", out);
        else if (*s == '\r')
            fputs("\\r", out);
        else if (*s < 0x20)
            fprintf(out, "\\u%04x", *s);
        else if (n == 0)
            fputs("\\ufffd", out);
        else
            fwrite(s, 1, n, out);
        s += n ? n : 1;
    }
    fputc('"', out);
}

void json_item(struct json *j, const char *key)
{
    if (j->comma[j->depth])
        fputc(',', j->out);
    j->comma[j->depth] = true;
    if (j->depth > 0 || key)
        fprintf(j->out, "\n%*s", 2 * j->depth, "");
    if (key) {
        json_write_string(j->out, key);
        fputs(": ", j->out);
    }
}

void json_open(struct json *j, const char *key, char bracket)
{
    json_item(j, key);
    fputc(bracket, j->out);
    j->comma[++j->depth] = false;
}

void json_close(struct json *j, char bracket)
{
    bool had_items = j->comma[j->depth--];
    if (had_items)
        fprintf(j->out, "\n%*s", 2 * j->depth, "");
    fputc(bracket, j->out);
}

void json_string(struct json *j, const char *key, const char *value)
{
    json_item(j, key);
    if (value)
        json_write_string(j->out, value);
    else
        fputs("null", j->out);
}

void json_int(struct json *j, const char *key, long long value)
{
    json_item(j, key);
    fprintf(j->out, "%lld", value);
}

void json_int_or_null(struct json *j, const char *key, long long value)
{
    json_item(j, key);
    if (value < 0)
        fputs("null", j->out);
    else
        fprintf(j->out, "%lld", value);
}

void json_number(struct json *j, const char *key, double value)
{
    json_item(j, key);
    if (isfinite(value))
        fprintf(j->out, "%.3f", value);
    else
        fputs("null", j->out);
}

void json_bool(struct json *j, const char *key, bool value)
{
    json_item(j, key);
    fputs(value ? "true" : "false", j->out);
}

void json_null(struct json *j, const char *key)
{
    json_item(j, key);
    fputs("null", j->out);
}
