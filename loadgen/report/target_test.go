package report

import (
	"strings"
	"testing"
)

func TestURLWithoutSchemeGetsAHint(t *testing.T) {
	for raw, want := range map[string]string{
		"127.0.0.1:8080/": `did you mean "http://127.0.0.1:8080/"?`,
		"localhost/x":     `did you mean "http://localhost/x"?`,
		"example.com":     `did you mean "http://example.com"?`,
	} {
		if _, err := ParseTarget(raw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %s", raw, err, want)
		}
	}
}
