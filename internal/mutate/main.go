// Command mutate checks that the tests bite: it applies each hand-made
// mutant of mutants.txt (a small, plausible mistake in a security rule, a
// figure's mapping or a statistic) to the working tree, runs the tests
// named for it, restores the file, and reports the mutants no test
// killed. Run it from the module's root: go run ./internal/mutate
// [-ci] [-only REGEXP] [mutants.txt].
//
// A mutant is a block of mutants.txt:
//
//	== name of the mistake                        [ci] [security]
//	file: path/of/the/file.go
//	run: TestA|TestB          (go test -run, in the file's package)
//	pkg: ./other/package      (optional: the tests are another package's)
//	- the text as it is (one or more lines, each after "- ")
//	+ the text it becomes (zero or more lines, each after "+ ")
//
// The text must occur exactly once in the file: a mutant whose text is
// gone (the code changed) is reported stale and fails the run, so the
// list keeps up with the code. Tagged ci, a mutant runs with -ci (in
// `make test`); tagged security, a survivor fails the run whatever else.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

type mutant struct {
	name, file, run, pkg string
	from, to             string
	ci, security         bool
	line                 int // in mutants.txt
}

func main() {
	ci := flag.Bool("ci", false, "only the mutants tagged ci")
	only := flag.String("only", "", "only the mutants whose name matches this regexp")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: go run ./internal/mutate [-ci] [-only REGEXP] [mutants.txt]")
		flag.PrintDefaults()
	}
	flag.Parse()
	list := "internal/mutate/mutants.txt"
	if flag.NArg() > 0 {
		list = flag.Arg(0)
	}
	var re *regexp.Regexp
	if *only != "" {
		var err error
		if re, err = regexp.Compile(*only); err != nil {
			fmt.Fprintf(os.Stderr, "mutate: -only %q: %v\n", *only, err)
			os.Exit(2)
		}
	}
	ms, err := parse(list)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mutate: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var ran, killed, survived, stale, securitySurvived int
	for _, m := range ms {
		if *ci && !m.ci || re != nil && !re.MatchString(m.name) {
			// Not run here, but its text must still stand once in its
			// file: -ci (make test) reports an entry the code left behind
			// before a full run trips on it.
			if *ci {
				if why := staleText(m); why != "" {
					stale++
					fmt.Printf("STALE    %s (%s)\n         %s\n", m.name, m.file, why)
				}
			}
			continue
		}
		if ctx.Err() != nil {
			break
		}
		ran++
		start := time.Now()
		res, out := try(ctx, m)
		fmt.Printf("%-8s %5.1fs  %s (%s)\n", res, time.Since(start).Seconds(), m.name, m.file)
		switch res {
		case "killed":
			killed++
		case "SURVIVED":
			survived++
			if m.security {
				securitySurvived++
			}
			fmt.Printf("         no test of %q failed with this change of %s:\n%s", m.run, m.file, indent(m.from, "- ")+indent(m.to, "+ "))
		default:
			stale++
			fmt.Printf("         %s\n", strings.TrimSpace(out))
		}
	}
	if ran == 0 {
		fmt.Fprintln(os.Stderr, "mutate: no mutant selected")
		os.Exit(2)
	}
	fmt.Printf("\n%d mutants: %d killed, %d survived, %d stale or broken: %.0f %% killed\n", ran, killed, survived, stale, 100*float64(killed)/float64(ran))
	if securitySurvived > 0 || stale > 0 || ctx.Err() != nil {
		os.Exit(1)
	}
}

// staleText says why m's text does not stand exactly once in its file
// ("" when it does).
func staleText(m mutant) string {
	orig, err := os.ReadFile(m.file)
	if err != nil {
		return err.Error()
	}
	if n := bytes.Count(orig, []byte(m.from)); n != 1 {
		return fmt.Sprintf("the text of mutants.txt line %d occurs %d times in %s, want once", m.line, n, m.file)
	}
	return ""
}

// try applies m, runs its tests and puts the file back, whatever
// happens: "killed", "SURVIVED", or why it could not be tried.
func try(ctx context.Context, m mutant) (string, string) {
	if why := staleText(m); why != "" {
		return "STALE", why
	}
	orig, err := os.ReadFile(m.file)
	if err != nil {
		return "STALE", err.Error()
	}
	mutated := bytes.Replace(orig, []byte(m.from), []byte(m.to), 1)
	st, err := os.Stat(m.file)
	if err != nil {
		return "STALE", err.Error()
	}
	if err := os.WriteFile(m.file, mutated, st.Mode()); err != nil {
		return "STALE", err.Error()
	}
	defer func() {
		if err := os.WriteFile(m.file, orig, st.Mode()); err != nil {
			fmt.Fprintf(os.Stderr, "mutate: PUT %s BACK BY HAND (git checkout %s): %v\n", m.file, m.file, err)
			os.Exit(1)
		}
	}()
	// The mutant must still build: one that does not is a broken entry,
	// not a killed mutant.
	pkg := m.pkg
	if pkg == "" {
		pkg = "./" + filepath.Dir(m.file)
	}
	if out, err := exec.CommandContext(ctx, "go", "vet", "./"+filepath.Dir(m.file)).CombinedOutput(); err != nil {
		return "BROKEN", "does not build or vet: " + firstLines(string(out), 3)
	}
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-run", m.run, pkg)
	cmd.Env = append(os.Environ(), "EDGEBENCH_MUTANT=1")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return "STOPPED", "interrupted"
	}
	if err != nil {
		return "killed", string(out)
	}
	if bytes.Contains(out, []byte("no tests to run")) {
		return "BROKEN", fmt.Sprintf("-run %q runs no test in %s", m.run, pkg)
	}
	return "SURVIVED", string(out)
}

// parse reads the mutants of path.
func parse(path string) ([]mutant, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ms []mutant
	var cur *mutant
	var from, to []string
	flush := func() error {
		if cur == nil {
			return nil
		}
		if cur.file == "" || cur.run == "" || len(from) == 0 {
			return fmt.Errorf("%s:%d: mutant %q wants file:, run: and - lines", path, cur.line, cur.name)
		}
		cur.from, cur.to = strings.Join(from, "\n"), strings.Join(to, "\n")
		ms = append(ms, *cur)
		cur, from, to = nil, nil, nil
		return nil
	}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "== "):
			if err := flush(); err != nil {
				return nil, err
			}
			name, tags, _ := strings.Cut(strings.TrimPrefix(l, "== "), "  [")
			cur = &mutant{name: strings.TrimSpace(name), line: n}
			for _, t := range strings.Fields(strings.NewReplacer("[", " ", "]", " ").Replace(tags)) {
				switch t {
				case "ci":
					cur.ci = true
				case "security":
					cur.security = true
				default:
					return nil, fmt.Errorf("%s:%d: unknown tag %q (ci, security)", path, n, t)
				}
			}
		case cur == nil && (l == "" || strings.HasPrefix(l, "#")):
		case cur == nil:
			return nil, fmt.Errorf("%s:%d: a line before the first == mutant", path, n)
		case strings.HasPrefix(l, "file: "):
			cur.file = strings.TrimSpace(strings.TrimPrefix(l, "file: "))
		case strings.HasPrefix(l, "pkg: "):
			cur.pkg = strings.TrimSpace(strings.TrimPrefix(l, "pkg: "))
		case strings.HasPrefix(l, "run: "):
			cur.run = strings.TrimSpace(strings.TrimPrefix(l, "run: "))
		case strings.HasPrefix(l, "- ") || l == "-":
			from = append(from, strings.TrimPrefix(strings.TrimPrefix(l, "-"), " "))
		case strings.HasPrefix(l, "+ ") || l == "+":
			to = append(to, strings.TrimPrefix(strings.TrimPrefix(l, "+"), " "))
		case l == "" || strings.HasPrefix(l, "#"):
		default:
			return nil, fmt.Errorf("%s:%d: want file:, run:, - or + (%q)", path, n, l)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return ms, nil
}

func indent(s, p string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		b.WriteString("         " + p + l + "\n")
	}
	return b.String()
}

func firstLines(s string, n int) string {
	ls := strings.SplitN(strings.TrimSpace(s), "\n", n+1)
	return strings.Join(ls[:min(n, len(ls))], " / ")
}
