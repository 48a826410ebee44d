package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
)

// The manual pages and the shell completions of a Program, made from the
// one definition of its flags: each command's FlagSet, as the command
// itself builds it when asked for --help. They cannot drift from the
// flags the command parses.

// Flags returns the FlagSet of the command name, as the command builds it
// (it runs it with --help, which parses nothing else and touches
// nothing), or nil for a command with no flags (version).
func (p *Program) Flags(name string) *FlagSet {
	c := p.command(name)
	if c == nil {
		return nil
	}
	env := &Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	var he *HelpError
	if err := c.Run(context.Background(), env, []string{"--help"}); errors.As(err, &he) {
		return he.FlagSet
	}
	return nil
}

// DocFile is one generated file: its path below the docs folder
// (man/edgebench-run.1, completion/edgebench.bash...) and its content.
type DocFile struct {
	Name    string
	Content []byte
}

// Docs returns the manual pages of the program (section 1: NAME.1, and
// NAME-COMMAND.1 for each command) and its completions for bash
// (NAME.bash), zsh (_NAME) and fish (NAME.fish).
func (p *Program) Docs() []DocFile {
	var files []DocFile
	files = append(files, DocFile{"man/" + p.Name + ".1", p.manMain()})
	for _, c := range p.Subcommands {
		files = append(files, DocFile{"man/" + p.Name + "-" + c.Name + ".1", p.manCommand(c)})
	}
	files = append(files,
		DocFile{"completion/" + p.Name + ".bash", p.bash()},
		DocFile{"completion/_" + p.Name, p.zsh()},
		DocFile{"completion/" + p.Name + ".fish", p.fish()})
	return files
}

// WriteDocs writes Docs below dir.
func (p *Program) WriteDocs(dir string) error {
	for _, f := range p.Docs() {
		path := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, f.Content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// StaleDocs returns the files of Docs that are missing below dir or differ
// from what the flags make now.
func (p *Program) StaleDocs(dir string) []string {
	var stale []string
	for _, f := range p.Docs() {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.Name)))
		if err != nil || !bytes.Equal(b, f.Content) {
			stale = append(stale, f.Name)
		}
	}
	return stale
}

// roff escapes s for a line of a manual page.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

func (p *Program) manHead(w *strings.Builder, title, name, summary string) {
	fmt.Fprintf(w, ".\\\" Generated from the flags of %s by 'make docs': do not edit.\n", p.Name)
	fmt.Fprintf(w, ".TH %s 1 \"\" \"%s\" \"User Commands\"\n", roff(strings.ToUpper(title)), p.Name)
	fmt.Fprintf(w, ".SH NAME\n%s \\- %s\n", roff(name), roff(summary))
}

func (p *Program) manMain() []byte {
	var w strings.Builder
	summary := "load tests and fleet benchmarks"
	p.manHead(&w, p.Name, p.Name, summary)
	fmt.Fprintf(&w, ".SH SYNOPSIS\n.B %s\n.I COMMAND\n[\\fIflags\\fR]\n", roff(p.Name))
	fmt.Fprintf(&w, ".SH COMMANDS\n")
	for _, c := range p.commands() {
		fmt.Fprintf(&w, ".TP\n.B %s", roff(c.Name))
		if c.Args != "" {
			fmt.Fprintf(&w, " %s", roff(c.Args))
		}
		fmt.Fprintf(&w, "\n%s\n", roff(c.Summary))
	}
	fmt.Fprintf(&w, ".PP\n\\fB%s COMMAND \\-h\\fR lists the flags of a command; \\fBman %s\\-COMMAND\\fR describes them.\n", roff(p.Name), roff(p.Name))
	w.WriteString(exitStatus)
	p.seeAlso(&w, "")
	return []byte(w.String())
}

const exitStatus = `.SH EXIT STATUS
.TP
.B 0
done, or help asked for
.TP
.B 1
failed (the one line on stderr says why)
.TP
.B 2
a usage mistake: a bad flag, argument or value, told in one line
`

func (p *Program) seeAlso(w *strings.Builder, except string) {
	var refs []string
	if except != "" {
		refs = append(refs, fmt.Sprintf("\\fB%s\\fR(1)", roff(p.Name)))
	}
	for _, c := range p.Subcommands {
		if c.Name != except {
			refs = append(refs, fmt.Sprintf("\\fB%s\\-%s\\fR(1)", roff(p.Name), roff(c.Name)))
		}
	}
	fmt.Fprintf(w, ".SH SEE ALSO\n%s\n.PP\nThe README of edgebench: https://github.com/edgebench/edgebench\n", strings.Join(refs, ",\n"))
}

func (p *Program) manCommand(c Subcommand) []byte {
	var w strings.Builder
	p.manHead(&w, p.Name+"-"+c.Name, p.Name+"-"+c.Name, c.Summary)
	fs := p.Flags(c.Name)
	synopsis := p.Name + " " + c.Name + " " + c.Args
	if fs != nil {
		synopsis = fs.Synopsis()
	}
	fmt.Fprintf(&w, ".SH SYNOPSIS\n.nf\n%s\n.fi\n", roff(synopsis))
	fmt.Fprintf(&w, ".SH DESCRIPTION\n%s.\n", roff(upperFirst(c.Summary)))
	if fs != nil {
		fmt.Fprintf(&w, ".SH OPTIONS\n")
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			value, usage := pflag.UnquoteUsage(f)
			w.WriteString(".TP\n")
			if f.Shorthand != "" {
				fmt.Fprintf(&w, "\\fB\\-%s\\fR, ", roff(f.Shorthand))
			}
			fmt.Fprintf(&w, "\\fB\\-\\-%s\\fR", roff(f.Name))
			if value != "" && f.NoOptDefVal == "" {
				fmt.Fprintf(&w, " \\fI%s\\fR", roff(value))
			}
			w.WriteString("\n" + roff(usage))
			if def := defaultOf(f); def != "" {
				fmt.Fprintf(&w, " (default %s)", roff(def))
			}
			w.WriteString("\n")
		})
		fmt.Fprintf(&w, ".PP\nA one\\-letter flag takes its value attached or apart (\\-c500, \\-c 500); a long one after = or apart, with one dash or two; a switch takes =false. Durations take 30s, 2m or a bare number of seconds.\n")
	}
	w.WriteString(exitStatus)
	p.seeAlso(&w, c.Name)
	return []byte(w.String())
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// defaultOf is a flag's default as its usage shows it, or "".
func defaultOf(f *pflag.Flag) string {
	switch f.DefValue {
	case "", "false", "0", "[]", "0s", "map[]":
		return ""
	}
	return f.DefValue
}

// flagWords lists a command's flags as typed: --name and -x.
func flagWords(fs *FlagSet) []string {
	var words []string
	if fs == nil {
		return nil
	}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		words = append(words, "--"+f.Name)
		if f.Shorthand != "" {
			words = append(words, "-"+f.Shorthand)
		}
	})
	return append(words, "--help")
}

// shortUsage is a flag's usage cut for a completion menu: its first
// clause, without the value's name.
func shortUsage(f *pflag.Flag) string {
	_, u := pflag.UnquoteUsage(f)
	for _, sep := range []string{"; ", " ("} {
		if i := strings.Index(u, sep); i > 0 {
			u = u[:i]
		}
	}
	if len(u) > 70 {
		u = u[:67] + "..."
	}
	return u
}

// shQuote quotes s for sh, bash, zsh and fish in single quotes.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func (p *Program) fn() string { return "_" + strings.ReplaceAll(p.Name, "-", "_") }

func (p *Program) bash() []byte {
	var w strings.Builder
	fmt.Fprintf(&w, "# bash completion for %s. Generated from its flags by 'make docs': do not edit.\n", p.Name)
	fmt.Fprintf(&w, "%s() {\n\tlocal cur=${COMP_WORDS[COMP_CWORD]} words\n", p.fn())
	fmt.Fprintf(&w, "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n\t\tCOMPREPLY=($(compgen -W %s -- \"$cur\"))\n\t\treturn\n\tfi\n",
		shQuote(strings.Join(append(p.names(), "help"), " ")))
	fmt.Fprintf(&w, "\tcase ${COMP_WORDS[1]} in\n")
	for _, c := range p.Subcommands {
		fmt.Fprintf(&w, "\t%s) words=%s ;;\n", c.Name, shQuote(strings.Join(flagWords(p.Flags(c.Name)), " ")))
	}
	fmt.Fprintf(&w, "\thelp) words=%s ;;\n", shQuote(strings.Join(p.names(), " ")))
	fmt.Fprintf(&w, "\tesac\n")
	fmt.Fprintf(&w, "\tif [[ $cur == -* || ${COMP_WORDS[1]} == help ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n\telse\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n\tfi\n}\n")
	fmt.Fprintf(&w, "complete -o filenames -F %s %s\n", p.fn(), p.Name)
	return []byte(w.String())
}

func (p *Program) zsh() []byte {
	var w strings.Builder
	fmt.Fprintf(&w, "#compdef %s\n# zsh completion for %s. Generated from its flags by 'make docs': do not edit.\n", p.Name, p.Name)
	fmt.Fprintf(&w, "%s() {\n\tlocal -a commands flags\n\tcommands=(\n", p.fn())
	for _, c := range p.commands() {
		fmt.Fprintf(&w, "\t\t%s\n", shQuote(c.Name+":"+c.Summary))
	}
	fmt.Fprintf(&w, "\t)\n\tif (( CURRENT == 2 )); then\n\t\t_describe command commands\n\t\treturn\n\tfi\n\tcase $words[2] in\n")
	for _, c := range p.Subcommands {
		fmt.Fprintf(&w, "\t%s)\n\t\tflags=(\n", c.Name)
		if fs := p.Flags(c.Name); fs != nil {
			fs.VisitAll(func(f *pflag.Flag) {
				if f.Hidden {
					return
				}
				fmt.Fprintf(&w, "\t\t\t%s\n", shQuote("--"+f.Name+":"+shortUsage(f)))
				if f.Shorthand != "" {
					fmt.Fprintf(&w, "\t\t\t%s\n", shQuote("-"+f.Shorthand+":"+shortUsage(f)))
				}
			})
		}
		fmt.Fprintf(&w, "\t\t) ;;\n")
	}
	fmt.Fprintf(&w, "\thelp) _describe command commands; return ;;\n\tesac\n")
	fmt.Fprintf(&w, "\tif [[ $PREFIX == -* ]]; then\n\t\t_describe flag flags\n\telse\n\t\t_files\n\tfi\n}\n%s \"$@\"\n", p.fn())
	return []byte(w.String())
}

func (p *Program) fish() []byte {
	var w strings.Builder
	fmt.Fprintf(&w, "# fish completion for %s. Generated from its flags by 'make docs': do not edit.\n", p.Name)
	fmt.Fprintf(&w, "complete -c %s -f -n __fish_use_subcommand -a help -d 'print the usage'\n", p.Name)
	for _, c := range p.commands() {
		fmt.Fprintf(&w, "complete -c %s -f -n __fish_use_subcommand -a %s -d %s\n", p.Name, c.Name, fishQuote(c.Summary))
	}
	for _, c := range p.Subcommands {
		fs := p.Flags(c.Name)
		if fs == nil {
			continue
		}
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Hidden {
				return
			}
			fmt.Fprintf(&w, "complete -c %s -n '__fish_seen_subcommand_from %s' -l %s", p.Name, c.Name, f.Name)
			if f.Shorthand != "" {
				fmt.Fprintf(&w, " -s %s", f.Shorthand)
			}
			if f.NoOptDefVal == "" {
				w.WriteString(" -r")
			}
			fmt.Fprintf(&w, " -d %s\n", fishQuote(shortUsage(f)))
		})
	}
	return []byte(w.String())
}
