#ifndef TRUSTBED_CQRENCODE_SHIM_H
#define TRUSTBED_CQRENCODE_SHIM_H
#include <qrencode.h>
#endif
