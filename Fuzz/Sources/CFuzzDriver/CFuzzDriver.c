// Declarations only (see include/CFuzzDriver.h): libFuzzer defines the driver.
#include "CFuzzDriver.h"
