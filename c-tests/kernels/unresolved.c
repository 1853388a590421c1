/* Calls a function no library defines: the dynamic loader refuses it (RTLD_NOW). */
void liboffload_test_missing_function(void);

void calls_missing(void) { liboffload_test_missing_function(); }
