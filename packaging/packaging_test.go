package packaging

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// root is the repository root; tests run in packaging/.
const root = ".."

func inCI() bool { return os.Getenv("CI") == "true" }

// need skips the test loudly when tool is absent, or fails it in CI when
// failInCI is set.
func need(t *testing.T, tool string, failInCI bool) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err == nil {
		return p
	}
	msg := "SKIPPING: " + tool + " not found on PATH; this test checks the packaging with it"
	if failInCI && inCI() {
		t.Fatal(msg + " (required when CI=true)")
	}
	t.Log(msg)
	t.Skip(msg)
	return ""
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  string
)

// builtBinary builds ./cmd/edgebench for linux/amd64 once per test run, as
// `make cross` does, and returns the folder holding edgebench-linux-amd64.
func builtBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "edgebench-pkg-")
		if err != nil {
			buildErr = err.Error()
			return
		}
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=0.0.0-test",
			"-o", filepath.Join(dir, "edgebench-linux-amd64"), "./cmd/edgebench")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = "go build ./cmd/edgebench: " + err.Error() + "\n" + string(out)
			return
		}
		buildDir = dir
	})
	if buildErr != "" {
		t.Fatal(buildErr)
	}
	return buildDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func TestDeb(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a .deb")
	}
	need(t, "dpkg-deb", true)
	dist := builtBinary(t)
	out := t.TempDir()
	run(t, root, []string{"ARCH=amd64", "BIN_ARCH=amd64", "VERSION=0.0.0-test", "DIST=" + dist},
		"go", "tool", "nfpm", "package", "--config", "packaging/nfpm.yaml", "--packager", "deb", "--target", out+"/")
	deb := filepath.Join(out, "edgebench_0.0.0~test_amd64.deb")
	if _, err := os.Stat(deb); err != nil {
		ents, _ := os.ReadDir(out)
		t.Fatalf("%v; built: %v", err, ents)
	}

	info := run(t, "", nil, "dpkg-deb", "--info", deb)
	for _, want := range []string{"Package: edgebench", "Architecture: amd64", "Version: 0.0.0~test", "conffiles", "postinst", "prerm"} {
		if !strings.Contains(info, want) {
			t.Errorf("dpkg-deb --info lacks %q:\n%s", want, info)
		}
	}
	if cf := run(t, "", nil, "dpkg-deb", "--info", deb, "conffiles"); strings.TrimSpace(cf) != "/etc/edgebench/agent.yaml" {
		t.Errorf("conffiles = %q, want /etc/edgebench/agent.yaml", cf)
	}
	postinst := run(t, "", nil, "dpkg-deb", "--info", deb, "postinst")
	for _, want := range []string{"adduser --system --group --no-create-home", "useradd --system", "systemctl daemon-reload", "systemctl enable"} {
		if !strings.Contains(postinst, want) {
			t.Errorf("postinst lacks %q", want)
		}
	}
	if strings.Contains(postinst, "systemctl start") {
		t.Error("postinst starts the service; it should only enable it")
	}
	prerm := run(t, "", nil, "dpkg-deb", "--info", deb, "prerm")
	for _, want := range []string{"systemctl stop", "systemctl disable"} {
		if !strings.Contains(prerm, want) {
			t.Errorf("prerm lacks %q", want)
		}
	}

	contents := run(t, "", nil, "dpkg-deb", "--contents", deb)
	for path, mode := range map[string]string{
		"./usr/bin/edgebench":                    "-rwxr-xr-x",
		"./lib/systemd/system/edgebench.service": "-rw-r--r--",
		"./etc/edgebench/agent.yaml":             "-rw-r-----",
	} {
		line := lineWith(contents, path)
		if line == "" {
			t.Errorf("package lacks %s:\n%s", path, contents)
		} else if !strings.HasPrefix(line, mode) {
			t.Errorf("%s: %q, want mode %s", path, line, mode)
		}
	}

	// The packaged files are the repository's, and the binary runs.
	x := t.TempDir()
	run(t, "", nil, "dpkg-deb", "-x", deb, x)
	for pkg, src := range map[string]string{
		"etc/edgebench/agent.yaml":             "agent.yaml",
		"lib/systemd/system/edgebench.service": "edgebench.service",
	} {
		a, _ := os.ReadFile(filepath.Join(x, pkg))
		b, _ := os.ReadFile(src)
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from packaging/%s", pkg, src)
		}
	}
	if v := run(t, "", nil, filepath.Join(x, "usr/bin/edgebench"), "version"); !strings.Contains(v, "0.0.0-test") {
		t.Errorf("packaged binary says %q", v)
	}
}

func lineWith(s, suffix string) string {
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if strings.HasSuffix(sc.Text(), " "+suffix) {
			return sc.Text()
		}
	}
	return ""
}

// TestDebScript runs deb.sh on stand-in binaries for the three
// architectures.
func TestDebScript(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three .deb files")
	}
	need(t, "dpkg-deb", true)
	dist := t.TempDir()
	for _, a := range []string{"armv7", "arm64", "amd64"} {
		if err := os.WriteFile(filepath.Join(dist, "edgebench-linux-"+a), []byte("#!/bin/sh\necho stand-in\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run(t, root, []string{"DIST=" + dist, "VERSION=1.2.3"}, "sh", "packaging/deb.sh")
	for _, arch := range []string{"armhf", "arm64", "amd64"} {
		deb := filepath.Join(dist, "edgebench_1.2.3_"+arch+".deb")
		if _, err := os.Stat(deb); err != nil {
			t.Errorf("deb.sh did not build %s: %v", filepath.Base(deb), err)
			continue
		}
		if got := strings.TrimSpace(run(t, "", nil, "dpkg-deb", "-f", deb, "Architecture")); got != arch {
			t.Errorf("%s: Architecture %q", filepath.Base(deb), got)
		}
	}
	// make deb passes `git describe` output as the first argument; it is
	// made a Debian version that sorts after its tag.
	for arg, want := range map[string]string{
		"c2b07f1-dirty":     "0.0.0+git.c2b07f1.dirty",
		"v1.2.3-4-gabc1234": "1.2.3+4.gabc1234",
		"v2.0.0":            "2.0.0",
		"dev":               "0.0.0+git.dev",
	} {
		run(t, root, []string{"DIST=" + dist, "VERSION="}, "sh", "packaging/deb.sh", arg, "amd64")
		deb := filepath.Join(dist, "edgebench_"+want+"_amd64.deb")
		if got := strings.TrimSpace(run(t, "", nil, "dpkg-deb", "-f", deb, "Version")); got != want {
			t.Errorf("deb.sh %s: Version %q, want %q", arg, got, want)
		}
	}
	// A missing binary is one clear error.
	os.Remove(filepath.Join(dist, "edgebench-linux-arm64"))
	cmd := exec.Command("sh", "packaging/deb.sh", "arm64")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "DIST="+dist, "VERSION=1.2.3")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "edgebench-linux-arm64 missing") {
		t.Errorf("missing binary: %v: %s", err, out)
	}
}

// unitSettings parses the [Service] and other sections of a unit into
// key -> values.
func unitSettings(t *testing.T, path string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]string{}
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("unit line %q has no =", line)
			continue
		}
		m[k] = append(m[k], v)
	}
	return m
}

func TestUnitHardening(t *testing.T) {
	s := unitSettings(t, "edgebench.service")
	for k, want := range map[string]string{
		"Type":                    "notify",
		"WatchdogSec":             "30",
		"ExecStart":               "/usr/bin/edgebench agent --config /etc/edgebench/agent.yaml",
		"User":                    "edgebench",
		"DynamicUser":             "no",
		"StateDirectory":          "edgebench",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"NoNewPrivileges":         "yes",
		"ProtectKernelTunables":   "yes",
		"ProtectControlGroups":    "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
		"LimitNOFILE":             "65536",
		"IPAddressDeny":           "any",
		"IPAddressAllow":          "localhost",
		"Restart":                 "on-failure",
		"KillSignal":              "SIGTERM",
		"TimeoutStopSec":          "15",
	} {
		if got := s[k]; len(got) != 1 || got[0] != want {
			t.Errorf("%s=%v, want %s", k, got, want)
		}
	}
	// /proc and /sys must stay readable for the probe.
	for _, k := range []string{"ProtectProc", "ProcSubset", "PrivateUsers", "InaccessiblePaths"} {
		if _, ok := s[k]; ok {
			t.Errorf("%s set: it hides /proc or /sys from the probe", k)
		}
	}
}

func TestUnitVerifies(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		// Not installable in every CI container: skip loudly, in CI too.
		t.Log("SKIPPING: systemd-analyze not found; packaging/edgebench.service is not verified")
		t.Skip("SKIPPING: systemd-analyze not found; packaging/edgebench.service is not verified")
	}
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(builtBinary(t), "edgebench-linux-amd64")
	data, err := os.ReadFile("edgebench.service")
	if err != nil {
		t.Fatal(err)
	}
	// verify checks that ExecStart's binary exists: point it at the one built.
	unit := strings.Replace(string(data), "ExecStart=/usr/bin/edgebench ", "ExecStart="+bin+" ", 1)
	if unit == string(data) {
		t.Fatal("ExecStart=/usr/bin/edgebench not found in the unit")
	}
	p := filepath.Join(t.TempDir(), "edgebench.service")
	if err := os.WriteFile(p, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(sa, "verify", "--man=no", p)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	// Unknown keys and bad values are warnings with exit status 0.
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, "edgebench.service") {
			t.Errorf("systemd-analyze verify: %s", strings.TrimSpace(line))
		}
	}
}

func TestScriptsParse(t *testing.T) {
	for _, s := range []string{"scripts/postinstall.sh", "scripts/preremove.sh", "deb.sh"} {
		run(t, "", nil, "sh", "-n", s)
		st, err := os.Stat(s)
		if err != nil || st.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", s)
		}
	}
}
