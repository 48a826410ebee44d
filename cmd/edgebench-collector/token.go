package main

import (
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/edgebench/edgebench/internal/config"
)

// apiToken is the collector API's token: the contents of file when given,
// else $EDGEBENCH_API_TOKEN, else none.
func apiToken(file string, getenv func(string) string) (string, error) {
	if file == "" {
		return strings.TrimSpace(getenv(config.EnvName("api_token"))), nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("api token: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" || strings.ContainsAny(t, " \t\r\n") {
		return "", fmt.Errorf("api token: %s must hold one token on one line", file)
	}
	return t, nil
}

// tokenTransport adds the API token to every request.
type tokenTransport struct{ token string }

func (t tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return http.DefaultTransport.RoundTrip(r)
}
