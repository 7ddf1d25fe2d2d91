#include <libwebsockets.h>
