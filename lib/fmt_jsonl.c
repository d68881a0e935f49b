/* fmt_jsonl.c: one JSON object a line (MS MARCO v2, BEIR corpus.jsonl).
 * The id is the value of one key, a string or a number. */
#include <errno.h>
#include <string.h>

#include "docdex.h"
#include "format.h"
#include "json.h"

/* Finds the member with this key: 1 found, 0 absent, -1 malformed JSON. */
static int find_member(const char *rec, size_t len, const char *key, size_t klen, dx_json_member *m)
{
	const char *p = rec, *end = rec + len;
	if (dx__json_open_object(&p, end) < 0)
		return -1;
	int r;
	while ((r = dx__json_next_member(&p, end, m)) == 1)
		if (dx__json_key_is(m, key, klen))
			return 1;
	return r;
}

/* Whether only blanks follow the object's closing brace. */
static int only_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++;
	return p == end;
}

static int jsonl_id(const dx_params *pm, const char *rec, size_t len, dx_buf *scratch,
                    const char **id, size_t *idlen, const char **why)
{
	/* The whole record is walked, not just up to the id, so that a line cut
	 * short (a partial download) is caught when it is indexed. */
	const char *p = rec, *end = rec + len;
	size_t klen = strlen(pm->id_field);
	dx_json_member m, idm;
	int r, found = 0;
	if (dx__json_open_object(&p, end) < 0) {
		*why = "malformed JSON record";
		return DX_EFORMAT;
	}
	while ((r = dx__json_next_member(&p, end, &m)) == 1)
		if (!found && dx__json_key_is(&m, pm->id_field, klen)) {
			idm = m;
			found = 1;
		}
	if (r < 0 || !only_blanks(p, end)) {
		*why = "malformed JSON record";
		return DX_EFORMAT;
	}
	if (!found) {
		*why = "record without the id field";
		return DX_ENOID;
	}
	char c = *idm.val;
	if (c != '"' && c != '-' && !(c >= '0' && c <= '9')) {
		*why = "id that is not a string or a number";
		return DX_EFORMAT;
	}
	if (dx__json_value(&idm, scratch, id, idlen) < 0) {
		*why = "malformed JSON string as id";
		return DX_EFORMAT;
	}
	if (*idlen == 0) {
		*why = "record with an empty id";
		return DX_ENOID;
	}
	return 0;
}

const char *dx__jsonl_default_id_field(const char *rec, size_t len)
{
	static const char *const keys[] = { "docid", "_id", "id", "pid", "doc_id" };
	const char *p = rec, *end = rec + len;
	dx_json_member m;
	if (dx__json_open_object(&p, end) < 0)
		return NULL;
	/* The first of them in the record wins: MS MARCO v2 passages carry both
	 * their own "pid" and their document's "docid", pid first. */
	while (dx__json_next_member(&p, end, &m) == 1)
		for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
			if (dx__json_key_is(&m, keys[i], strlen(keys[i])))
				return keys[i];
	return NULL;
}

static int jsonl_field_parse(const dx_params *pm, const char *name, size_t len, dx_field *f,
                             const char **why)
{
	(void)pm;
	memset(f, 0, sizeof *f);
	if (len == 0)
		return 0; /* the text: see text_member() */
	if (len >= sizeof f->name) {
		*why = "field names are 1 to 127 bytes";
		return DX_EINVAL;
	}
	memcpy(f->name, name, len);
	f->name_len = len;
	return 0;
}

/* The member that holds a record's text: the first of these keys that it
 * has (BEIR, anserini, MS MARCO v2 documents, passages, segments). */
static int text_member(const char *rec, size_t len, dx_json_member *out)
{
	static const char *const keys[] = { "text", "contents", "body", "passage", "segment" };
	const size_t nkeys = sizeof keys / sizeof *keys;
	const char *p = rec, *end = rec + len;
	dx_json_member m;
	size_t best = nkeys;
	if (dx__json_open_object(&p, end) < 0)
		return -1;
	int r;
	while ((r = dx__json_next_member(&p, end, &m)) == 1)
		for (size_t i = 0; i < best; i++)
			if (dx__json_key_is(&m, keys[i], strlen(keys[i]))) {
				*out = m;
				best = i;
			}
	return r < 0 ? -1 : best < nkeys;
}

/* Nesting deeper than this in a value is not checked but passed as text:
 * no IR corpus nests its metadata this deep. */
enum { CHECK_DEPTH = 64 };

/* A member's value: a string decoded, another value as its text, which
 * output can copy as JSON once it is checked to be JSON (NaN, which
 * Python's json writes, is not: it comes as text). */
static int member_value(const dx_json_member *m, dx_buf *scratch, const char **out, size_t *outlen)
{
	if (dx__json_value(m, scratch, out, outlen) < 0)
		return DX_EFORMAT;
	if (*m->val == '"')
		return DX_VALUE_TEXT;
	return dx__json_check(m->val, m->val_end, CHECK_DEPTH) == m->val_end ? DX_VALUE_JSON : DX_VALUE_TEXT;
}

static int jsonl_field(const dx_params *pm, const dx_field *f, const char *rec, size_t len,
                       dx_buf *scratch, const char **out, size_t *outlen)
{
	(void)pm;
	dx_json_member m;
	int r = f->name_len ? find_member(rec, len, f->name, f->name_len, &m) : text_member(rec, len, &m);
	if (r < 0)
		return DX_EFORMAT;
	if (r == 0) {
		*out = rec;
		*outlen = 0;
		return DX_VALUE_ABSENT;
	}
	return member_value(&m, scratch, out, outlen);
}

static int jsonl_all(const dx_params *pm, const char *rec, size_t len, dx_buf *scratch,
                     dx_value_sink add, void *ctx)
{
	const char *p = rec, *end = rec + len;
	size_t idlen = strlen(pm->id_field);
	dx_json_member m;
	int r, id_seen = 0;
	if (dx__json_open_object(&p, end) < 0)
		return DX_EFORMAT;
	while ((r = dx__json_next_member(&p, end, &m)) == 1) {
		const char *name = m.key, *s;
		size_t nl = m.key_len, n, at = scratch->len;
		if (m.key_escaped) {
			/* The key with its quotes, decoded. */
			if (dx__json_decode(m.key - 1, m.key + m.key_len + 1, scratch) < 0)
				return errno == ENOMEM ? DX_ENOMEM : DX_EFORMAT;
			nl = scratch->len - at;
		}
		int kind = member_value(&m, scratch, &s, &n);
		if (kind < 0)
			return kind;
		/* A decoded key is pointed at only now: decoding the value may
		 * have moved scratch. */
		if (m.key_escaped)
			name = scratch->p + at;
		/* The id is the first member of its key, as jsonl_id takes it. */
		int is_id = !id_seen && dx__json_key_is(&m, pm->id_field, idlen);
		id_seen |= is_id;
		if ((kind = add(ctx, name, nl, s, n, kind, is_id)) < 0)
			return kind;
	}
	return r < 0 ? DX_EFORMAT : 0;
}

const dx_format_ops dx__fmt_jsonl = {
	.name = "jsonl",
	.next = dx__next_line,
	.id = jsonl_id,
	.field_parse = jsonl_field_parse,
	.field = jsonl_field,
	.all = jsonl_all,
	.ends = dx__line_ends,
	.gap = 1,
};
