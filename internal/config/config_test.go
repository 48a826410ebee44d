package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{"0": 0, "1048576": 1 << 20, "64MiB": 64 << 20, "1.5G": 3 << 29, "512k": 512 << 10, "2 KB": 2000, "1GiB": 1 << 30} {
		got, err := ParseByteSize(in)
		if err != nil || got != want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "12 parsecs", "1..2M", "x"} {
		if _, err := ParseByteSize(in); err == nil {
			t.Errorf("ParseByteSize(%q): no error", in)
		}
	}
	if s := ByteSize(64 << 20).String(); s != "64MiB" {
		t.Errorf("String %q", s)
	}
}

// settings is a configuration of every kind of field.
type settings struct {
	Name   string            `yaml:"name" help:"a name"`
	Wait   time.Duration     `yaml:"wait" help:"a duration"`
	Size   ByteSize          `yaml:"size" help:"a size"`
	Allow  []string          `yaml:"allow" help:"a list"`
	Labels map[string]string `yaml:"labels" help:"a map"`
	Nested struct {
		Count int `yaml:"count" help:"a count"`
	} `yaml:"nested"`
	Enabled *bool `yaml:"enabled" help:"a switch"`
}

// TestLoadLayers: the file over the defaults, the environment over the
// file, the flags over the environment, and Sources says which.
func TestLoadLayers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(path, []byte("name: file\nwait: 5s\nallow: [a, b]\nnested:\n  count: 3\n"), 0o600)
	env := map[string]string{"EDGEBENCH_WAIT": "7", "EDGEBENCH_NESTED_COUNT": "4", "EDGEBENCH_SIZE": "1KiB"}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	s := &settings{Name: "default", Size: 10}
	flags := Bind(fs, s)
	if err := fs.Parse([]string{"-nested-count", "5", "-labels", "k=v", "-enabled"}); err != nil {
		t.Fatal(err)
	}
	src, err := Load(s, path, func(k string) string { return env[k] }, flags)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "file" || s.Wait != 7*time.Second || s.Size != 1024 || strings.Join(s.Allow, ",") != "a,b" ||
		s.Nested.Count != 5 || s.Labels["k"] != "v" || s.Enabled == nil || !*s.Enabled {
		t.Errorf("loaded %+v", s)
	}
	for key, want := range map[string]string{"name": path + " line 1", "wait": "EDGEBENCH_WAIT", "nested.count": "flag -nested-count", "allow": path + " line 3"} {
		if got := src.Where(key, "default"); got != want {
			t.Errorf("%s from %q, want %q", key, got, want)
		}
	}
	if got := src.Where("size", "default"); got != "EDGEBENCH_SIZE" {
		t.Errorf("size from %q", got)
	}
	for _, tc := range []struct{ file, env, want string }{
		{"nmae: x\n", "", path + " line 1: unknown field \"nmae\"; did you mean name?"},
		{"wait: soon\n", "", path + ` line 1: wait: want a duration (e.g. 30s, 5m), got "soon"`},
		{"", "zz", "EDGEBENCH_WAIT: wait: cannot parse \"zz\" as a duration (e.g. 30s, 5m, or 30 for seconds)"},
	} {
		os.WriteFile(path, []byte(tc.file), 0o600)
		_, err := Load(&settings{}, path, func(k string) string {
			if k == "EDGEBENCH_WAIT" {
				return tc.env
			}
			return ""
		}, nil)
		if err == nil || err.Error() != tc.want {
			t.Errorf("error %v, want %s", err, tc.want)
		}
	}
}

// An unknown key is one line with its file and line and the known key it
// most likely meant, nested ones by their dotted name; a key like no
// other gets no guess.
func TestUnknownKeySuggests(t *testing.T) {
	dir := t.TempDir()
	for yaml, want := range map[string]string{
		"name: x\nwiat: 5s\n":    `line 2: unknown field "wiat"; did you mean wait?`,
		"nested:\n  cuont: 3\n":  `line 2: unknown field "nested.cuont"; did you mean nested.count?`,
		"name: x\nparsecs: 12\n": `line 2: unknown field "parsecs"`,
	} {
		path := filepath.Join(dir, "c.yaml")
		os.WriteFile(path, []byte(yaml), 0o600)
		var s settings
		_, err := Load(&s, path, nil, nil)
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Errorf("%q: %v, want ...%s", yaml, err, want)
		}
	}
}
