#ifndef TRUSTBED_CMICROHTTPD_SHIM_H
#define TRUSTBED_CMICROHTTPD_SHIM_H
/* Declarations only: the C code that calls libmicrohttpd lives in the CMicroHTTPDSupport target. */
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>
#endif
