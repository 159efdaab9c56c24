/* SPDX-License-Identifier: MIT */
/* What clmem-info and clmem-bench write for other programs to read: JSON
 * (a small streaming writer) and XML text (clmem-bench's SVG plots), both
 * valid UTF-8 whatever the drivers' strings hold. Not installed. */
#ifndef CLMEM_TOOLS_OUTPUT_H
#define CLMEM_TOOLS_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The length of the valid UTF-8 sequence at s, or 0 when s starts none
 * (overlong forms and surrogates are invalid too). */
size_t utf8_length(const unsigned char *s);

/* s as XML character data or attribute text: &, <, >, " and ' escaped,
 * control characters and invalid UTF-8 bytes written as U+FFFD. */
void xml_text(FILE *out, const char *s);

/* A streaming JSON writer: it tracks, per nesting level, whether a comma
 * is due, and indents two spaces a level. A key of NULL writes an array
 * element (or the top-level value). */
#define JSON_MAX_DEPTH 16
struct json {
    FILE *out;
    int depth;
    bool comma[JSON_MAX_DEPTH];
};

/* Starts an item at the current level (comma, new line, indent, key); the
 * caller writes its value. */
void json_item(struct json *j, const char *key);
void json_open(struct json *j, const char *key, char bracket); /* '{' or '[' */
void json_close(struct json *j, char bracket);
void json_string(struct json *j, const char *key, const char *value); /* NULL: null */
void json_int(struct json *j, const char *key, long long value);
void json_int_or_null(struct json *j, const char *key, long long value); /* < 0: null */
void json_number(struct json *j, const char *key, double value);     /* not finite: null */
void json_bool(struct json *j, const char *key, bool value);
void json_null(struct json *j, const char *key);
#endif
