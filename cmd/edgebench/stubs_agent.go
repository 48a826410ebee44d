package main

import "context"

// Placeholder until the agent lands.
func cmdAgent(ctx context.Context, env *cliEnv, args []string) error {
	return usagef("not built yet")
}
