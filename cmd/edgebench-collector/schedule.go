package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/edgebench/edgebench/collector/client"
	"github.com/edgebench/edgebench/collector/cron"
	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/internal/cli"
)

const scheduleUsage = `usage: edgebench-collector schedule add NAME (--every D | --cron 'M H DOM MON DOW') [--jitter D] [trigger's flags and selectors] URL
       edgebench-collector schedule list [--json]
       edgebench-collector schedule runs NAME [--limit N] [--json]
       edgebench-collector schedule rm|pause|resume NAME

A schedule fires a trigger by itself, from the running collector (--server):
every D (the first firing D after it is added), or at the minutes of a cron
expression read in UTC. Its results carry the label schedule=NAME. --jitter D
sends each matching online device its own command at a random moment within D
of the due time. Devices offline or busy at a firing are recorded as missed.

add takes every flag of trigger (edgebench-collector trigger -h) besides
--wait and --max-wait, and:
      --every duration   fire every this long (at least 1s)
      --cron string      fire at these minutes, 'M H DOM MON DOW' in UTC
      --jitter duration  spread the devices' start over this long
`

func cmdSchedule(ctx context.Context, env *cli.Env, args []string) error {
	if len(args) == 0 {
		return cli.Usagef("want add, list, runs, rm, pause or resume (edgebench-collector schedule -h)")
	}
	verb, args := args[0], args[1:]
	switch verb {
	case "-h", "--help", "help":
		fmt.Fprint(env.Stdout, scheduleUsage)
		return nil
	case "add":
		return scheduleAdd(ctx, env, args)
	case "list", "ls":
		fs := cli.NewFlagSet("schedule list", "edgebench-collector schedule list [--json]", env.Stdout)
		api := apiFlags(fs)
		asJSON := fs.Bool("json", false, "JSON instead of a table")
		if err := fs.ParseNoArgs(args); err != nil {
			return err
		}
		c, err := api.client(env)
		if err != nil {
			return err
		}
		var ss []scheduledb.Schedule
		if err := c.Do(ctx, http.MethodGet, "/api/schedules", nil, &ss); err != nil {
			return err
		}
		if *asJSON {
			return writeIndented(env.Stdout, ss)
		}
		writeSchedules(env.Stdout, ss)
		return nil
	case "runs":
		fs := cli.NewFlagSet("schedule runs", "edgebench-collector schedule runs NAME [--limit N] [--json]", env.Stdout)
		api := apiFlags(fs)
		limit := fs.Int("limit", 20, "the newest N runs (0: all)")
		asJSON := fs.Bool("json", false, "JSON instead of a table")
		rest, err := fs.Parse(args)
		if err != nil {
			return err
		}
		if len(rest) != 1 {
			return cli.Usagef("want one schedule name: edgebench-collector schedule runs NAME")
		}
		c, err := api.client(env)
		if err != nil {
			return err
		}
		var runs []scheduledb.ScheduleRun
		if err := c.Do(ctx, http.MethodGet, fmt.Sprintf("/api/schedules/%s/runs?limit=%d", url.PathEscape(rest[0]), *limit), nil, &runs); err != nil {
			return err
		}
		if *asJSON {
			return writeIndented(env.Stdout, runs)
		}
		writeScheduleRuns(env.Stdout, runs)
		return nil
	case "rm", "remove", "pause", "resume":
		fs := cli.NewFlagSet("schedule "+verb, "edgebench-collector schedule "+verb+" NAME", env.Stdout)
		api := apiFlags(fs)
		rest, err := fs.Parse(args)
		if err != nil {
			return err
		}
		if len(rest) != 1 {
			return cli.Usagef("want one schedule name: edgebench-collector schedule %s NAME", verb)
		}
		c, err := api.client(env)
		if err != nil {
			return err
		}
		u, method := "/api/schedules/"+url.PathEscape(rest[0]), http.MethodPost
		if verb == "rm" || verb == "remove" {
			method = http.MethodDelete
		} else {
			u += "/" + verb
		}
		if err := c.Do(ctx, method, u, nil, &json.RawMessage{}); err != nil {
			return err
		}
		past := map[string]string{"rm": "removed", "remove": "removed", "pause": "paused", "resume": "resumed"}[verb]
		fmt.Fprintf(env.Stdout, "schedule %s %s\n", rest[0], past)
		return nil
	}
	return cli.Usagef("unknown schedule command %q: want add, list, runs, rm, pause or resume", verb)
}

// scheduleAdd takes --every, --cron and --jitter out of args and reads
// the rest as trigger's flags.
func scheduleAdd(ctx context.Context, env *cli.Env, args []string) error {
	var sch scheduledb.Schedule
	var rest []string
	if len(args) > 0 && args[0] != "-h" && args[0] != "--help" && strings.HasPrefix(args[0], "-") {
		return cli.Usagef("the schedule's name comes first: edgebench-collector schedule add NAME --every 24h [select] URL")
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		if a == "-h" || a == "--help" {
			fmt.Fprint(env.Stdout, scheduleUsage)
			return nil
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "--") || (name != "every" && name != "cron" && name != "jitter") {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return cli.Usagef("--%s needs a value", name)
			}
			i++
			val = args[i]
		}
		switch name {
		case "cron":
			if _, err := cron.Parse(val); err != nil {
				return cli.Usagef("--cron: %v", err)
			}
			sch.Cron = val
		default:
			d, err := cli.ParseDuration(val)
			if err != nil || d < 0 {
				return cli.Usagef("--%s %q: want a duration such as 24h, 30m or 90s", name, val)
			}
			if name == "every" {
				sch.Every = d
			} else {
				sch.Jitter = d
			}
		}
	}
	if len(rest) == 0 || strings.HasPrefix(rest[0], "-") {
		return cli.Usagef("want a name and a URL: edgebench-collector schedule add NAME --every 24h [select] URL")
	}
	for _, a := range rest {
		if strings.HasPrefix(a, "--wait") || strings.HasPrefix(a, "--max-wait") {
			return cli.Usagef("%s is for trigger: a schedule's firings are listed by 'schedule runs NAME'", a)
		}
	}
	sch.Name = rest[0]
	tc, err := parseTrigger(rest[1:], env)
	if err != nil {
		return err
	}
	sch.Trigger = tc.req
	switch {
	case sch.Every == 0 && sch.Cron == "":
		return cli.Usagef("say when: --every 24h or --cron 'M H * * *'")
	case sch.Every > 0 && sch.Cron != "":
		return cli.Usagef("--every and --cron exclude each other")
	}
	if err := sch.Check(); err != nil {
		return cli.Usagef("%v", err)
	}
	var got scheduledb.Schedule
	if err := client.New(tc.server, tc.token).Do(ctx, http.MethodPost, "/api/schedules", sch, &got); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "schedule %s added: next firing %s\n", got.Name, got.NextAt.Format(time.RFC3339))
	return nil
}

// apiFlagSet holds --server and --api-token-file for the commands that
// talk to a running collector.
type apiFlagSet struct {
	server, tokenFile *string
}

func apiFlags(fs *cli.FlagSet) apiFlagSet {
	return apiFlagSet{
		server:    fs.String("server", "http://127.0.0.1:8080", "the running collector's web address"),
		tokenFile: fs.String("api-token-file", "", "file holding the collector API's token (or EDGEBENCH_API_TOKEN)"),
	}
}

func (a apiFlagSet) client(env *cli.Env) (*client.Client, error) {
	token, err := apiToken(*a.tokenFile, env.Getenv)
	if err != nil {
		return nil, err
	}
	return client.New(*a.server, token), nil
}

func writeIndented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func writeSchedules(w io.Writer, ss []scheduledb.Schedule) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tWHEN\tDEVICES\tURL\tNEXT\tLAST RUN")
	for _, s := range ss {
		when := "every " + s.Every.String()
		if s.Cron != "" {
			when = "cron " + s.Cron
		}
		if s.Jitter > 0 {
			when += " jitter " + s.Jitter.String()
		}
		r := s.Trigger
		devs := "fleet " + r.Fleet
		switch {
		case r.Device != "":
			devs = strings.TrimPrefix(r.Fleet+"/", "/") + r.Device
		case len(r.Select) > 0:
			devs = group.LabelString(r.Select)
			if r.Fleet != "" {
				devs += " in " + r.Fleet
			}
		}
		next := s.NextAt.Format(time.RFC3339)
		if s.Paused {
			next = "paused"
		}
		last := "never"
		if lr := s.LastRun; lr != nil {
			last = fmt.Sprintf("%s: %d sent, %d missed", lr.DueAt.Format(time.RFC3339), len(lr.Devices), len(lr.Missed))
			if lr.Error != "" {
				last += " (" + escape.Printable(lr.Error) + ")"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, when, escape.Printable(devs), escape.Printable(r.Spec.URL), next, last)
	}
	tw.Flush()
}

func writeScheduleRuns(w io.Writer, runs []scheduledb.ScheduleRun) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DUE\tFIRED BY\tCOMMANDS\tSENT\tMISSED")
	for _, r := range runs {
		var missed []string
		for _, m := range r.Missed {
			missed = append(missed, m.Device+" ("+m.Reason+")")
		}
		if r.Error != "" {
			missed = append(missed, "error: "+r.Error)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", r.DueAt.Format(time.RFC3339), escape.Printable(r.Collector),
			strings.Join(r.Commands, ","), len(r.Devices), escape.Printable(strings.Join(missed, "; ")))
	}
	tw.Flush()
}
