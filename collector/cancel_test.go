package collector

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/edgebench/edgebench/internal/testenv"
)

// TestCancelGuard: a cancel is a command, guarded as a trigger is: with
// an API token the fleet page's button is off (403, the page is not
// under the token) and the API wants the token; without one, a
// cross-site POST is refused and an unknown command is 404.
func TestCancelGuard(t *testing.T) {
	post := func(url string, hdr map[string]string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	col := startCollector(t, Config{DB: filepath.Join(t.TempDir(), "g.db"), Listen: testenv.FreeAddr(t), Accounts: testAccounts(), APIToken: "s3cret"})
	base := "http://" + col.WebAddr()
	for _, c := range []struct {
		name string
		path string
		hdr  map[string]string
		want int
	}{
		{"page button with a token", "/commands/01JX/cancel", nil, http.StatusForbidden},
		{"API without the token", "/api/commands/01JX/cancel", nil, http.StatusUnauthorized},
		{"API with the token", "/api/commands/01JX/cancel", map[string]string{"Authorization": "Bearer s3cret"}, http.StatusNotFound},
	} {
		if got := post(base+c.path, c.hdr); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	col.Close()
	col = startCollector(t, Config{DB: filepath.Join(t.TempDir(), "o.db"), Listen: testenv.FreeAddr(t), Accounts: testAccounts()})
	defer col.Close()
	base = "http://" + col.WebAddr()
	if got := post(base+"/commands/01JX/cancel", nil); got != http.StatusNotFound {
		t.Errorf("page button, no token, unknown command: %d, want 404", got)
	}
	if got := post(base+"/commands/01JX/cancel", map[string]string{"Sec-Fetch-Site": "cross-site"}); got != http.StatusForbidden {
		t.Errorf("cross-site POST of the button: %d, want 403", got)
	}
}
