package cli

import (
	"context"
	"strings"
	"testing"
)

// docsProgram has a command with a flag of each kind and a refused one.
func docsProgram() *Program {
	return &Program{Name: "tool", Version: "1", Subcommands: []Subcommand{
		{Name: "run", Args: "URL [flags]", Summary: "run it", Run: func(_ context.Context, env *Env, args []string) error {
			fs := NewFlagSet("run", "tool run [flags] URL", env.Stderr)
			fs.IntP("connections", "c", 10, "connections (concurrency)")
			fs.Bool("no-probe", false, "do not sample the machine")
			fs.String("label", "", "label `k=v` (repeatable)")
			fs.Refuse("proxy", "X", true, "no proxy")
			_, err := fs.Parse(args)
			return err
		}},
	}}
}

// TestDocsFromFlags: the manual pages and completions list every flag the
// command parses, and none it refuses.
func TestDocsFromFlags(t *testing.T) {
	files := map[string]string{}
	for _, f := range docsProgram().Docs() {
		files[f.Name] = string(f.Content)
	}
	for name, wants := range map[string][]string{
		"man/tool.1":           {".TH TOOL 1", "tool \\- ", ".B run", "tool\\-run\\fR(1)", ".SH EXIT STATUS"},
		"man/tool-run.1":       {".TH TOOL\\-RUN 1", "tool run [flags] URL", `\fB\-c\fR, \fB\-\-connections\fR \fIint\fR`, "connections (concurrency) (default 10)", `\fB\-\-no\-probe\fR` + "\n", `\fB\-\-label\fR \fIk=v\fR`},
		"completion/tool.bash": {"complete -o filenames -F _tool tool", "run) words='--connections -c --no-probe --label --help'"},
		"completion/_tool":     {"#compdef tool", "'--connections:connections'", "'-c:connections'", "'run:run it'"},
		"completion/tool.fish": {"-a run -d 'run it'", "-l connections -s c -r -d 'connections'", "-l no-probe -d 'do not sample the machine'"},
	} {
		got, ok := files[name]
		if !ok {
			t.Errorf("no %s among %d files", name, len(files))
			continue
		}
		for _, w := range wants {
			if !strings.Contains(got, w) {
				t.Errorf("%s lacks %q:\n%s", name, w, got)
			}
		}
		if strings.Contains(got, "proxy") {
			t.Errorf("%s lists the refused --proxy:\n%s", name, got)
		}
	}
}
