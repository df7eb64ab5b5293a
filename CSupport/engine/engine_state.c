// The engine's global state (hw_g) and the questions every file asks of it.
// Nothing here starts or stops anything: that is lifecycle.c, which reaches
// the subsystems through their hooks (subsystems.c).
#include "engine_internal.h"

hw_engine hw_g;

bool hw_engine_running(void) { return hw_g.running && !hw_g.disabled && hw_owned(); }

void hw_engine_set_interposed(void) { hw_g.interposed = true; }
