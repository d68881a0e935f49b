/* params.c: build parameters as "key=value" lines. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "params.h"

static const char *dup_names[] = { "error", "first", "last" };

static int add_line(dx_buf *out, const char *key, const char *val)
{
	if (dx__buf_add(out, key, strlen(key)) < 0 || dx__buf_addc(out, '=') < 0 ||
	    dx__buf_add(out, val, strlen(val)) < 0 || dx__buf_addc(out, '\n') < 0)
		return -1;
	return 0;
}

int dx__params_write(const dx_params *p, dx_buf *out)
{
	char num[32];
	snprintf(num, sizeof num, "%u", p->id_column);
	if (add_line(out, "docdex", DX_VERSION) < 0 ||
	    add_line(out, "format", dx_format_name(p->format)) < 0)
		return -1;
	if (p->format == DX_FMT_TSV &&
	    (add_line(out, "id_column", num) < 0 || add_line(out, "columns", p->columns) < 0))
		return -1;
	if (p->format == DX_FMT_JSONL && add_line(out, "id_field", p->id_field) < 0)
		return -1;
	return add_line(out, "duplicates", dup_names[p->duplicates]) < 0 ||
	       add_line(out, "skip_bad", p->skip_bad ? "yes" : "no") < 0 ? -1 : 0;
}

static int copy_value(char *dst, size_t dstsz, const char *v, size_t n)
{
	if (n >= dstsz)
		return -1;
	memcpy(dst, v, n);
	dst[n] = '\0';
	return 0;
}

int dx__params_read(const char *text, size_t len, dx_params *p, const char *path, dx_err *err)
{
	memset(p, 0, sizeof *p);
	p->id_column = 1;
	const char *s = text, *end = text + len;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		const char *eq = memchr(s, '=', (size_t)(le - s));
		if (!eq)
			goto bad;
		size_t kl = (size_t)(eq - s), vl = (size_t)(le - eq - 1);
		const char *v = eq + 1;
		char val[1024];
		if (copy_value(val, sizeof val, v, vl) < 0)
			goto bad;
#define KEY(k) (kl == sizeof(k) - 1 && memcmp(s, k, kl) == 0)
		if (KEY("format")) {
			p->format = dx_format_parse(val);
			if (p->format <= 0)
				goto bad;
		} else if (KEY("id_column")) {
			char *e;
			unsigned long c = strtoul(val, &e, 10);
			if (*e || c == 0 || c > 1000000)
				goto bad;
			p->id_column = (unsigned)c;
		} else if (KEY("columns")) {
			if (copy_value(p->columns, sizeof p->columns, v, vl) < 0)
				goto bad;
		} else if (KEY("id_field")) {
			if (copy_value(p->id_field, sizeof p->id_field, v, vl) < 0)
				goto bad;
		} else if (KEY("duplicates")) {
			int d = -1;
			for (int i = 0; i < 3; i++)
				if (strcmp(val, dup_names[i]) == 0)
					d = i;
			if (d < 0)
				goto bad;
			p->duplicates = d;
		} else if (KEY("skip_bad")) {
			p->skip_bad = strcmp(val, "yes") == 0;
		}
		/* Other keys (the docdex version that wrote it) are informative. */
#undef KEY
		s = nl ? nl + 1 : end;
		continue;
bad:
		return dx__fail(err, DX_ECORRUPT, 0, path, "index damaged, bad build parameter line %.*s",
		                (int)(le - s > 60 ? 60 : le - s), s);
	}
	if (!p->format)
		return dx__fail(err, DX_ECORRUPT, 0, path, "index damaged, no format in its build parameters");
	return 0;
}
