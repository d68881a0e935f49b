/* version.h: the text of docdex --version. */
#ifndef DX_VERSION_TEXT_H
#define DX_VERSION_TEXT_H

#include <stdio.h>

void print_version(FILE *f);

#endif
