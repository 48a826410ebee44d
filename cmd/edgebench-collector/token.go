package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/edgebench/edgebench/internal/config"
)

// apiToken is the collector API's token: the contents of file when given,
// else $EDGEBENCH_API_TOKEN, else none.
func apiToken(file string, getenv func(string) string) (string, error) {
	return readToken("api token", "api_token", file, getenv)
}

// metricsToken is the token /metrics requires: the contents of file when
// given, else $EDGEBENCH_METRICS_TOKEN, else none.
func metricsToken(file string, getenv func(string) string) (string, error) {
	return readToken("metrics token", "metrics_token", file, getenv)
}

// readToken reads the token what: from file when given (one token on one
// line), else from the variable of key, else none.
func readToken(what, key, file string, getenv func(string) string) (string, error) {
	if file == "" {
		return strings.TrimSpace(getenv(config.EnvName(key))), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" || strings.ContainsAny(t, " \t\r\n") {
		return "", fmt.Errorf("%s: %s must hold one token on one line", what, file)
	}
	return t, nil
}
