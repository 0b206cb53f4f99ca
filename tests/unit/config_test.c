/*
 * config_test — the PROUST_* variable tables (common/config.c): a layer
 * above the engine registers its own (proust_config_register, as Proust
 * MPI does with src/mpi/init/mpi_config.h); proust_config_entry lists them
 * after the engine's; the unknown-variable warning knows them and names
 * them as the closest match; switch words.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "proust.h"
#include "unit.h"

static const proust_config_var_t layer[] = {
    {"PROUST_LAYER_KNOB", "7", "a knob of a layer above"},
    {"PROUST_LAYER_OTHER", "", "another one"},
};

/* What proust__config_check_unknown writes to stderr. */
static char *warnings(void)
{
    static char out[4096];
    FILE *f = tmpfile();
    EXPECT_TRUE(f != NULL);
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(f), 2);
    proust__config_check_unknown();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    size_t n = fread(out, 1, sizeof out - 1, f);
    out[n] = '\0';
    fclose(f);
    return out;
}

int main(void)
{
    setenv("PROUST_LOG_LEVEL", "warn", 1);
    proust__log_init();
    int engine = 0;
    while (proust_config_entry(engine, NULL, NULL, NULL, NULL) == PROUST_OK)
        engine++;
    EXPECT_EQ(engine, PROUST_CFG_COUNT);

    setenv("PROUST_LAYER_KNOB", "3", 1);
    setenv("PROUST_LAYER_KNOBB", "3", 1); /* a typo */
    /* before the layer registers, its variable is unknown */
    EXPECT_TRUE(strstr(warnings(), "unknown variable PROUST_LAYER_KNOB (") != NULL);

    EXPECT_EQ(proust_config_register(NULL, 1), PROUST_ERR_INVALID);
    EXPECT_EQ(proust_config_register(layer, 0), PROUST_ERR_INVALID);
    static const proust_config_var_t bad[] = {{"LAYER_KNOB", "", ""}};
    EXPECT_EQ(proust_config_register(bad, 1), PROUST_ERR_INVALID);
    EXPECT_EQ(proust_config_register(layer, 2), PROUST_OK);
    EXPECT_EQ(proust_config_register(layer, 2), PROUST_OK); /* again: nothing */

    const char *name, *value, *def, *doc;
    EXPECT_EQ(proust_config_entry(engine, &name, &value, &def, &doc), PROUST_OK);
    EXPECT_TRUE(strcmp(name, "PROUST_LAYER_KNOB") == 0 && strcmp(value, "3") == 0 &&
                strcmp(def, "7") == 0 && strcmp(doc, layer[0].doc) == 0);
    EXPECT_EQ(proust_config_entry(engine + 1, &name, &value, NULL, NULL), PROUST_OK);
    EXPECT_TRUE(strcmp(name, "PROUST_LAYER_OTHER") == 0 && strcmp(value, "") == 0);
    EXPECT_EQ(proust_config_entry(engine + 2, &name, NULL, NULL, NULL), PROUST_ERR_INVALID);
    EXPECT_EQ(proust_config_entry(-1, &name, NULL, NULL, NULL), PROUST_ERR_INVALID);

    /* registered: known, and the closest name for the typo */
    const char *w = warnings();
    EXPECT_TRUE(strstr(w, "unknown variable PROUST_LAYER_KNOB (") == NULL);
    EXPECT_TRUE(strstr(w, "unknown variable PROUST_LAYER_KNOBB (did you mean "
                          "PROUST_LAYER_KNOB?)") != NULL);

    EXPECT_EQ(proust_config_switch("ON"), 1);
    EXPECT_EQ(proust_config_switch("yes"), 1);
    EXPECT_EQ(proust_config_switch("1"), 1);
    EXPECT_EQ(proust_config_switch("Off"), 0);
    EXPECT_EQ(proust_config_switch("no"), 0);
    EXPECT_EQ(proust_config_switch("0"), 0);
    EXPECT_EQ(proust_config_switch("auto"), -1);
    EXPECT_EQ(proust_config_switch(NULL), -1);
    printf("config: ok\n");
    return 0;
}
