/* json_text.c: the commands' JSON objects, written in memory by the core's
 * writer (see dxbench.h). */
#include <stdlib.h>

#include "buf.h"
#include "dxbench.h"
#include "json.h"

struct dxb_json {
	dx_buf text;
	dx_json_writer w;
};

static int to_text(void *ctx, const void *p, size_t len)
{
	return dx__buf_add(ctx, p, len);
}

dxb_json *dxb_json_new(int indent)
{
	dxb_json *j = calloc(1, sizeof *j);
	if (j)
		dx__jw_init(&j->w, to_text, &j->text, indent);
	return j;
}

void dxb_json_begin_object(dxb_json *j, int layout)
{
	if (j)
		dx__jw_begin_object(&j->w, layout == DXB_JSON_BLOCK ? DX_JW_BLOCK : DX_JW_INLINE);
}

void dxb_json_end_object(dxb_json *j)
{
	if (j)
		dx__jw_end_object(&j->w);
}

void dxb_json_begin_array(dxb_json *j, int layout)
{
	if (j)
		dx__jw_begin_array(&j->w, layout == DXB_JSON_BLOCK ? DX_JW_BLOCK : DX_JW_INLINE);
}

void dxb_json_end_array(dxb_json *j)
{
	if (j)
		dx__jw_end_array(&j->w);
}

void dxb_json_key(dxb_json *j, const char *name)
{
	if (j)
		dx__jw_key(&j->w, name);
}

void dxb_json_string(dxb_json *j, const char *s)
{
	if (j)
		dx__jw_cstring(&j->w, s);
}

void dxb_json_null(dxb_json *j)
{
	if (j)
		dx__jw_null(&j->w);
}

void dxb_json_uint(dxb_json *j, uint64_t v)
{
	if (j)
		dx__jw_uint(&j->w, v);
}

void dxb_json_double(dxb_json *j, double x, int precision)
{
	if (j)
		dx__jw_double(&j->w, x, precision);
}

char *dxb_json_finish(dxb_json *j)
{
	if (!j)
		return NULL;
	char *text = NULL;
	if (dx__jw_finish(&j->w) == 0 && dx__buf_addc(&j->text, '\0') == 0)
		text = j->text.p;
	else
		dx__buf_free(&j->text);
	free(j);
	return text;
}
