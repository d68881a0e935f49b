/* The version macros of docdex.h and the library's own say the same. */
#include "docdex.h"
#include "unit.h"

int main(void)
{
	CHECK_EQ(DX_VERSION_NUMBER, DX_VERSION_MAJOR * 10000 + DX_VERSION_MINOR * 100 + DX_VERSION_PATCH);
	CHECK_EQ(dx_version_number(), DX_VERSION_NUMBER);
	CHECK(strcmp(dx_version(), DX_VERSION) == 0);
	char s[32];
	snprintf(s, sizeof s, "%d.%d.%d", DX_VERSION_MAJOR, DX_VERSION_MINOR, DX_VERSION_PATCH);
	CHECK(strcmp(DX_VERSION, s) == 0);
	CHECK(DX_VERSION_MINOR < 100 && DX_VERSION_PATCH < 100);
#if DX_VERSION_NUMBER < 100
#error "DX_VERSION_NUMBER is not usable in #if"
#endif
	UNIT_DONE();
}
