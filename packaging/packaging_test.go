package packaging

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
)

// root is the repository root; tests run in packaging/.
const root = ".."

func inCI() bool { return testenv.InCI() }

// need skips the test loudly when tool is absent, or fails it in CI when
// failInCI is set.
func need(t *testing.T, tool string, failInCI bool) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err == nil {
		return p
	}
	if failInCI {
		testenv.Missing(t, tool+" is not on PATH; this test checks the packaging with it", "apt-get install the package that has it")
	}
	t.Skip("!!! SKIPPED: " + tool + " is not on PATH; this test checks the packaging with it")
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

// builtBinary builds ./cmd/edgebench and ./cmd/edgebench-collector for
// linux/amd64 once per test run, as `make cross` does, and returns the
// folder holding edgebench-linux-amd64 and edgebench-collector-linux-amd64.
func builtBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "edgebench-pkg-")
		if err != nil {
			buildErr = err.Error()
			return
		}
		for _, name := range []string{"edgebench", "edgebench-collector"} {
			cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=0.0.0-test",
				"-o", filepath.Join(dir, name+"-linux-amd64"), "./cmd/"+name)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = "go build ./cmd/" + name + ": " + err.Error() + "\n" + string(out)
				return
			}
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

// pkg is one of the .deb packages: its nfpm config, its files (path in
// the package, mode, the repository file it must equal if any) and what
// its scripts do.
type pkg struct {
	name, config, unit string
	conffile           string            // the conffiles, one a line
	files              map[string]string // path in the package -> mode
	sources            map[string]string // path in the package -> packaging/ file it is
	user               string
}

var packages = []pkg{
	{name: "edgebench", config: "packaging/nfpm.yaml", conffile: "/etc/edgebench/agent.yaml", unit: "edgebench.service",
		files: map[string]string{"./usr/bin/edgebench": "-rwxr-xr-x", "./lib/systemd/system/edgebench.service": "-rw-r--r--",
			"./etc/edgebench/agent.yaml": "-rw-r--r--", "./usr/share/man/man1/edgebench-run.1.gz": "-rw-r--r--",
			"./usr/share/bash-completion/completions/edgebench": "-rw-r--r--", "./usr/share/zsh/vendor-completions/_edgebench": "-rw-r--r--",
			"./usr/share/fish/vendor_completions.d/edgebench.fish": "-rw-r--r--", "./usr/share/doc/edgebench/copyright": "-rw-r--r--"},
		sources: map[string]string{"etc/edgebench/agent.yaml": "agent.yaml", "lib/systemd/system/edgebench.service": "edgebench.service",
			"usr/share/bash-completion/completions/edgebench": "../docs/completion/edgebench.bash"},
		user: "edgebench"},
	{name: "edgebench-collector", config: "packaging/nfpm-collector.yaml", conffile: "/etc/edgebench-collector/collector.yaml\n/etc/edgebench/collector.env", unit: "edgebench-collector.service",
		files: map[string]string{"./usr/bin/edgebench-collector": "-rwxr-xr-x", "./lib/systemd/system/edgebench-collector.service": "-rw-r--r--",
			"./etc/edgebench/collector.env": "-rw-r--r--", "./usr/share/man/man1/edgebench-collector-compare.1.gz": "-rw-r--r--",
			"./etc/edgebench-collector/collector.yaml":                    "-rw-r--r--",
			"./usr/share/bash-completion/completions/edgebench-collector": "-rw-r--r--",
			"./usr/share/doc/edgebench-collector/changelog.gz":            "-rw-r--r--"},
		sources: map[string]string{"etc/edgebench/collector.env": "collector.env", "etc/edgebench-collector/collector.yaml": "collector.yaml",
			"lib/systemd/system/edgebench-collector.service": "edgebench-collector.service"},
		user: "edgebench-collector"},
}

var (
	debOnce sync.Once
	debErr  string
)

// buildDeb builds the .deb files of the binaries builtBinary made, as
// `make deb` does (packaging/deb.sh amd64: the changelog and manual pages
// it stages included), once, and returns p's.
func buildDeb(t *testing.T, p pkg) string {
	t.Helper()
	dist := builtBinary(t)
	debOnce.Do(func() {
		cmd := exec.Command("sh", "packaging/deb.sh", "amd64")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "VERSION=0.0.0-test", "DIST="+dist)
		if out, err := cmd.CombinedOutput(); err != nil {
			debErr = "packaging/deb.sh amd64: " + err.Error() + "\n" + string(out)
		}
	})
	if debErr != "" {
		t.Fatal(debErr)
	}
	deb := filepath.Join(dist, p.name+"_0.0.0~test_amd64.deb")
	if _, err := os.Stat(deb); err != nil {
		ents, _ := os.ReadDir(dist)
		t.Fatalf("%v; built: %v", err, ents)
	}
	return deb
}

func TestDeb(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries and the .deb files")
	}
	need(t, "dpkg-deb", true)
	for _, p := range packages {
		t.Run(p.name, func(t *testing.T) {
			deb := buildDeb(t, p)
			info := run(t, "", nil, "dpkg-deb", "--info", deb)
			for _, want := range []string{"Package: " + p.name, "Architecture: amd64", "Version: 0.0.0~test", "conffiles", "postinst", "prerm", "postrm", "Depends: adduser"} {
				if !strings.Contains(info, want) {
					t.Errorf("dpkg-deb --info lacks %q:\n%s", want, info)
				}
			}
			if cf := run(t, "", nil, "dpkg-deb", "--info", deb, "conffiles"); strings.TrimSpace(cf) != p.conffile {
				t.Errorf("conffiles = %q, want %s", cf, p.conffile)
			}
			postinst := run(t, "", nil, "dpkg-deb", "--info", deb, "postinst")
			for _, want := range []string{"adduser --system --group --home /var/lib/" + p.user, "systemctl --system daemon-reload",
				"deb-systemd-helper enable " + p.unit, "deb-systemd-invoke try-restart " + p.unit, " " + p.user + " "} {
				if !strings.Contains(postinst, want) {
					t.Errorf("postinst lacks %q", want)
				}
			}
			if strings.Contains(postinst, "systemctl start") || strings.Contains(postinst, "invoke start") || strings.Contains(postinst, "--no-create-home") {
				t.Error("postinst starts the service (it should only enable it), or makes a user whose home is missing (adduser warns)")
			}
			prerm := run(t, "", nil, "dpkg-deb", "--info", deb, "prerm")
			for _, want := range []string{"deb-systemd-invoke stop " + p.unit} {
				if !strings.Contains(prerm, want) {
					t.Errorf("prerm lacks %q", want)
				}
			}
			postrm := run(t, "", nil, "dpkg-deb", "--info", deb, "postrm")
			for _, want := range []string{"deb-systemd-helper purge " + p.unit, "deluser --quiet --system " + p.user, "delgroup --quiet --system " + p.user} {
				if !strings.Contains(postrm, want) {
					t.Errorf("postrm lacks %q", want)
				}
			}
			contents := run(t, "", nil, "dpkg-deb", "--contents", deb)
			for path, mode := range p.files {
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
			for path, src := range p.sources {
				a, _ := os.ReadFile(filepath.Join(x, path))
				b, _ := os.ReadFile(src)
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs from packaging/%s", path, src)
				}
			}
			if v := run(t, "", nil, filepath.Join(x, "usr/bin", p.name), "version"); !strings.Contains(v, "0.0.0-test") {
				t.Errorf("packaged binary says %q", v)
			}
		})
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
		for _, name := range []string{"edgebench", "edgebench-collector"} {
			if err := os.WriteFile(filepath.Join(dist, name+"-linux-"+a), []byte("#!/bin/sh\necho stand-in\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	run(t, root, []string{"DIST=" + dist, "VERSION=1.2.3"}, "sh", "packaging/deb.sh")
	for _, arch := range []string{"armhf", "arm64", "amd64"} {
		for _, name := range []string{"edgebench", "edgebench-collector"} {
			deb := filepath.Join(dist, name+"_1.2.3_"+arch+".deb")
			if _, err := os.Stat(deb); err != nil {
				t.Errorf("deb.sh did not build %s: %v", filepath.Base(deb), err)
				continue
			}
			if got := strings.TrimSpace(run(t, "", nil, "dpkg-deb", "-f", deb, "Architecture")); got != arch {
				t.Errorf("%s: Architecture %q", filepath.Base(deb), got)
			}
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

// hardening is what both units set alike.
var hardening = map[string]string{
	"DynamicUser":             "no",
	"ProtectSystem":           "strict",
	"ProtectHome":             "yes",
	"PrivateTmp":              "yes",
	"NoNewPrivileges":         "yes",
	"ProtectKernelTunables":   "yes",
	"ProtectKernelModules":    "yes",
	"ProtectKernelLogs":       "yes",
	"ProtectControlGroups":    "yes",
	"ProtectClock":            "yes",
	"ProtectHostname":         "yes",
	"RestrictNamespaces":      "yes",
	"RestrictRealtime":        "yes",
	"RestrictSUIDSGID":        "yes",
	"LockPersonality":         "yes",
	"MemoryDenyWriteExecute":  "yes",
	"CapabilityBoundingSet":   "",
	"AmbientCapabilities":     "",
	"SystemCallArchitectures": "native",
	"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
	"UMask":                   "0077",
	"LimitNOFILE":             "65536",
	"Restart":                 "on-failure",
	"KillSignal":              "SIGTERM",
}

func TestCollectorUnitHardening(t *testing.T) {
	s := unitSettings(t, "edgebench-collector.service")
	want := map[string]string{
		"Type":             "exec",
		"EnvironmentFile":  "/etc/edgebench/collector.env",
		"ExecStart":        "/usr/bin/edgebench-collector serve $SERVE_ARGS",
		"User":             "edgebench-collector",
		"StateDirectory":   "edgebench-collector",
		"WorkingDirectory": "/var/lib/edgebench-collector",
		"PrivateDevices":   "yes",
		"ProtectProc":      "invisible",
		"ProcSubset":       "pid",
		"TimeoutStopSec":   "40",
	}
	for k, v := range hardening {
		want[k] = v
	}
	for k, v := range want {
		if got := s[k]; len(got) != 1 || got[0] != v {
			t.Errorf("%s=%v, want %s", k, got, v)
		}
	}
	if got := s["SystemCallFilter"]; !slices.Equal(got, []string{"@system-service", "~@privileged @resources"}) {
		t.Errorf("SystemCallFilter=%v", got)
	}
	// The default settings name the state directory the unit makes, and
	// the environment file does not override the settings' file.
	yml, err := os.ReadFile("collector.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(yml), "\ndb: /var/lib/edgebench-collector/edgebench.db\n") {
		t.Error("collector.yaml does not put the SQLite store in the state directory")
	}
	env, err := os.ReadFile("collector.env")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(env), "\n") {
		if strings.HasPrefix(line, "EDGEBENCH_") {
			t.Errorf("collector.env sets %s over collector.yaml", line)
		}
	}
}

func TestUnitHardening(t *testing.T) {
	s := unitSettings(t, "edgebench.service")
	for k, v := range hardening {
		if got := s[k]; len(got) != 1 || got[0] != v {
			t.Errorf("%s=%v, want %s (as the collector's)", k, got, v)
		}
	}
	for k, want := range map[string]string{
		"Type":           "notify",
		"WatchdogSec":    "30",
		"ExecStart":      "/usr/bin/edgebench agent --config /etc/edgebench/agent.yaml",
		"User":           "edgebench",
		"StateDirectory": "edgebench",
		"IPAddressDeny":  "any",
		"IPAddressAllow": "localhost",
		"TimeoutStopSec": "15",
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
	sa := need(t, "systemd-analyze", true) // .ci/run installs systemd
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	for _, p := range packages {
		bin := filepath.Join(builtBinary(t), p.name+"-linux-amd64")
		data, err := os.ReadFile(p.unit)
		if err != nil {
			t.Fatal(err)
		}
		// verify checks that ExecStart's binary exists: point it at the one built.
		unit := strings.Replace(string(data), "ExecStart=/usr/bin/"+p.name+" ", "ExecStart="+bin+" ", 1)
		if unit == string(data) {
			t.Fatalf("ExecStart=/usr/bin/%s not found in %s", p.name, p.unit)
		}
		path := filepath.Join(t.TempDir(), p.unit)
		if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
			t.Fatal(err)
		}
		verify(t, sa, path)
	}
}

// verify runs systemd-analyze verify on a unit file and fails on any line
// about it: unknown keys and bad values are warnings with exit status 0.
func verify(t *testing.T, sa, path string) {
	t.Helper()
	out, err := exec.Command(sa, "verify", "--man=no", path).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze verify %s: %v\n%s", path, err, out)
	}
	for line := range strings.Lines(string(out)) {
		if strings.Contains(line, filepath.Base(path)) {
			t.Errorf("systemd-analyze verify: %s", strings.TrimSpace(line))
		}
	}
}

func TestScriptsParse(t *testing.T) {
	for _, s := range []string{"scripts/postinstall.sh", "scripts/preremove.sh", "scripts/postremove.sh", "scripts/collector-postinstall.sh",
		"scripts/collector-preremove.sh", "scripts/collector-postremove.sh", "deb.sh"} {
		run(t, "", nil, "sh", "-n", s)
		st, err := os.Stat(s)
		if err != nil || st.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", s)
		}
	}
}

// TestDebInstall installs both packages with dpkg -i, runs their binaries,
// verifies their installed units and removes and purges them. It changes
// the machine, so it runs as root only in CI (CI=true, a fresh Debian) or
// when EDGEBENCH_DEB_INSTALL=1 asks for it, and never over an installed
// edgebench.
func TestDebInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and installs the .deb files")
	}
	if !inCI() && os.Getenv("EDGEBENCH_DEB_INSTALL") != "1" {
		t.Skip("SKIPPING: installs packages on this machine; runs in CI, or with EDGEBENCH_DEB_INSTALL=1 (as root)")
	}
	if os.Geteuid() != 0 {
		t.Fatal("dpkg -i needs root")
	}
	need(t, "dpkg", true)
	for _, p := range packages {
		if out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", p.name).CombinedOutput(); err == nil && strings.Contains(string(out), "installed") {
			t.Fatalf("%s is installed on this machine (%s): not touching it", p.name, out)
		}
	}
	var debs, names []string
	for _, p := range packages {
		debs = append(debs, buildDeb(t, p))
		names = append(names, p.name)
	}
	t.Cleanup(func() { exec.Command("dpkg", append([]string{"--purge"}, names...)...).Run() })
	for _, p := range packages { // should purge leave them, the users go with the test
		if exec.Command("getent", "passwd", p.user).Run() != nil {
			t.Cleanup(func() { exec.Command("userdel", p.user).Run(); exec.Command("groupdel", p.user).Run() })
		}
	}
	if out := run(t, "", nil, "dpkg", append([]string{"-i"}, debs...)...); strings.Contains(out, "Warning") || strings.Contains(out, "can't be accessed") {
		t.Errorf("dpkg -i warns:\n%s", out)
	}
	status := func(name string) string {
		out, _ := exec.Command("dpkg-query", "-W", "-f=${Status}", name).CombinedOutput()
		return strings.TrimSpace(string(out))
	}
	sa, saErr := exec.LookPath("systemd-analyze")
	if saErr != nil && inCI() {
		t.Error("systemd-analyze not found: CI must install systemd")
	}
	for _, p := range packages {
		if st := status(p.name); st != "install ok installed" {
			t.Errorf("%s: %s", p.name, st)
		}
		if v := run(t, "", nil, "/usr/bin/"+p.name, "version"); !strings.Contains(v, "0.0.0-test") {
			t.Errorf("installed %s says %q", p.name, v)
		}
		run(t, "", nil, "getent", "passwd", p.user)
		for _, cf := range strings.Fields(p.conffile) {
			fi, err := os.Stat(cf)
			if err != nil || fi.Mode().Perm() != 0o640 {
				t.Errorf("%s: %v %v, want mode 640", cf, fi, err)
			}
			if group := strings.TrimSpace(run(t, "", nil, "stat", "-c", "%U:%G", cf)); group != "root:"+p.user {
				t.Errorf("%s owned by %s, want root:%s", cf, group, p.user)
			}
		}
		if sa != "" {
			verify(t, sa, "/lib/systemd/system/"+p.unit)
		}
	}
	collectorReadsItsYAML(t)
	run(t, "", nil, "dpkg", append([]string{"-r"}, names...)...)
	for _, p := range packages {
		if st := status(p.name); st != "deinstall ok config-files" {
			t.Errorf("%s after dpkg -r: %s", p.name, st)
		}
		for _, f := range []string{"/usr/bin/" + p.name, "/lib/systemd/system/" + p.unit} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("%s left after dpkg -r", f)
			}
		}
		for _, cf := range strings.Fields(p.conffile) {
			if _, err := os.Stat(cf); err != nil {
				t.Errorf("dpkg -r removed the settings %s: %v", cf, err)
			}
		}
	}
	run(t, "", nil, "dpkg", append([]string{"--purge"}, names...)...)
	for _, p := range packages {
		if st := status(p.name); st != "" && !strings.Contains(st, "not-installed") && !strings.Contains(st, "no packages found") {
			t.Errorf("%s after dpkg --purge: %s", p.name, st)
		}
		for _, cf := range strings.Fields(p.conffile) {
			if _, err := os.Stat(cf); err == nil {
				t.Errorf("%s left after dpkg --purge", cf)
			}
		}
		for _, db := range []string{"passwd", "group"} {
			if exec.Command("getent", db, p.user).Run() == nil {
				t.Errorf("the system %s %s is left after dpkg --purge", db, p.user)
			}
		}
	}
}

// TestLintian runs Debian's lintian on the amd64 .deb files: no error and
// no warning, and each override in packaging/lintian justified by a
// comment above it. Without lintian it skips loudly; in CI it fails.
func TestLintian(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the .deb files")
	}
	lintian := need(t, "lintian", true)
	for _, p := range packages {
		t.Run(p.name, func(t *testing.T) {
			deb := buildDeb(t, p)
			out, err := exec.Command(lintian, "--fail-on", "error,warning", deb).CombinedOutput()
			var tags []string
			for _, l := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(l, "E: ") || strings.HasPrefix(l, "W: ") {
					tags = append(tags, l)
				}
			}
			if err != nil || len(tags) > 0 {
				t.Errorf("lintian %s: %v\n%s", filepath.Base(deb), err, out)
			}
			// --show-overrides lists the overridden tags as O: (and exits 2).
			shown, _ := exec.Command(lintian, "--show-overrides", deb).CombinedOutput()
			overrides, err := os.ReadFile(filepath.Join("lintian", p.name))
			if err != nil {
				t.Fatal(err)
			}
			commented := false
			for _, l := range strings.Split(strings.TrimSpace(string(overrides)), "\n") {
				switch {
				case strings.HasPrefix(l, "#"):
					commented = true
				case strings.TrimSpace(l) == "":
					commented = false
				default:
					if !commented {
						t.Errorf("lintian/%s: override %q has no comment saying why", p.name, l)
					}
					if tag := strings.Fields(l)[1]; !strings.Contains(string(shown), "O: "+p.name+": "+tag) {
						t.Errorf("lintian/%s: override %q is not used (lintian no longer finds it): remove it", p.name, l)
					}
				}
			}
		})
	}
}

// collectorReadsItsYAML starts the installed collector as its service's
// user, with no flag but where it listens and stores: it reads the
// shipped /etc/edgebench-collector/collector.yaml (0640, root and the
// service's group) and the accounts file that names, and starts; with a
// key the file does not know, it refuses to start and names the line.
func collectorReadsItsYAML(t *testing.T) {
	t.Helper()
	const accounts = "/etc/edgebench/accounts.yaml" // as the shipped collector.yaml names it
	if _, err := os.Stat(accounts); err == nil {
		t.Fatalf("%s exists on this machine: not touching it", accounts)
	}
	if err := os.WriteFile(accounts, []byte("collector: {username: collector, password: c0llect}\ndevices: []\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(accounts)
	run(t, "", nil, "chgrp", "edgebench-collector", accounts)
	dir, err := os.MkdirTemp("", "edgebench-deb-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	run(t, "", nil, "chown", "edgebench-collector:", dir)
	u, err := user.Lookup("edgebench-collector")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	serve := func(extra ...string) (string, error) {
		args := append([]string{"serve", "--listen", testenv.FreeAddr(t), "--web", "-", "--db", filepath.Join(dir, "c.db")}, extra...)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// The service's user and group, as the unit runs it (runuser
		// would stand between the test and the collector's signals).
		cmd := exec.CommandContext(ctx, "/usr/bin/edgebench-collector", args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		out := &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		for i := 0; i < 100; i++ {
			select {
			case err := <-done:
				return out.String(), err
			default:
			}
			if strings.Contains(out.String(), "collector started") {
				cmd.Process.Signal(os.Interrupt)
				return out.String(), <-done
			}
			exec.Command("sleep", "0.1").Run()
		}
		cmd.Process.Kill()
		<-done
		return out.String(), nil
	}
	out, err := serve()
	if err != nil || !strings.Contains(out, "collector started") {
		t.Errorf("the installed collector with the shipped collector.yaml: %v\n%s", err, out)
	}
	// The same file with a typo, beside it (the one in /etc is left as
	// it is: collectors of other tests may start meanwhile).
	yml, err := os.ReadFile("/etc/edgebench-collector/collector.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(bad, append(yml, "kep: 30d\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := serve("--config", bad); err == nil || !strings.Contains(out, `unknown field "kep"; did you mean keep?`) {
		t.Errorf("a key the file does not know: %v\n%s", err, out)
	}
}

// lockedBuffer is a buffer a process writes to while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
