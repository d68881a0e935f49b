/* version.c: the version of the library that runs (DX_VERSION of its build). */
#include "docdex.h"

const char *dx_version(void)
{
	return DX_VERSION;
}

int dx_version_number(void)
{
	return DX_VERSION_NUMBER;
}
