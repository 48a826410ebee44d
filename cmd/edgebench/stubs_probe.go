package main

import "context"

// Placeholders until the probe lands.
func cmdProbe(ctx context.Context, env *cliEnv, args []string) error {
	return usagef("not built yet")
}

func cmdInfo(ctx context.Context, env *cliEnv, args []string) error {
	return usagef("not built yet")
}
