/* Loads a plugin shared object with dlopen, as a language runtime loads an
 * extension module, and checks what its plugin_run answers. */
#include <breakwater/breaker.h>
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  void *h;
  int (*run)(void);
  int state;
  if (argc != 2) return fprintf(stderr, "usage: load_plugin PLUGIN.so\n"), 2;
  h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) return fprintf(stderr, "dlopen: %s\n", dlerror()), 1;
  *(void **)&run = dlsym(h, "plugin_run");
  if (run == NULL) return fprintf(stderr, "dlsym: %s\n", dlerror()), 1;
  state = run();
  dlclose(h);
  if (state != (int)BW_OPEN)
    return fprintf(stderr, "plugin_run answered %d\n", state), 1;
  printf("plugin %s: ok\n", argv[1]);
  return 0;
}
