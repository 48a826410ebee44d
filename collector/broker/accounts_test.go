package broker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Two devices whose client ids meet could take over each other's
// persistent session, so such an accounts file is refused at load.
func TestAccountsRefuseSharedClientIDs(t *testing.T) {
	for _, tc := range []struct{ name, devices, want string }{
		{"derived ids across fleets", `
  - {fleet: a-b, id: c, password: x}
  - {fleet: a, id: b-c, password: y}`, `client id "edgebench-a-b-c" is also device a-b/c's`},
		{"explicit id equal to a derived one", `
  - {fleet: lab, id: pi-1, password: x}
  - {fleet: lab, id: pi-2, password: y, client_id: edgebench-lab-pi-1}`, `client id "edgebench-lab-pi-1" is also device lab/pi-1's`},
		{"explicit id equal to a run id", `
  - {fleet: lab, id: pi-1, password: x}
  - {fleet: lab, id: pi-2, password: y, client_id: edgebench-lab-pi-1/run}`, `client id "edgebench-lab-pi-1/run"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "accounts.yaml")
			body := "collector: {username: collector, password: s3cret}\ndevices:" + tc.devices + "\n"
			if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadAccounts(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadAccounts = %v, want an error with %q", err, tc.want)
			}
		})
	}

	p := filepath.Join(t.TempDir(), "accounts.yaml")
	ok := "collector: {username: collector, password: s3cret}\ndevices:\n  - {fleet: lab, id: pi-1, password: x}\n  - {fleet: lab, id: pi-2, password: y}\n  - {fleet: lab2, id: pi-1, username: lab2-pi-1, password: z}\n"
	if err := os.WriteFile(p, []byte(ok), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadAccounts(p); err != nil {
		t.Fatalf("distinct client ids refused: %v", err)
	}
}
