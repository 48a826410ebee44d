package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/show"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/wire"
)

// dbVar adds --db, the store, to p: by default $EDGEBENCH_DB or else
// edgebench.db; and --db-password-file, the PostgreSQL password, kept out
// of the command line (where ps shows it).
func dbVar(fs *cli.FlagSet, env *cli.Env, p *dbFlag) {
	p.raw = env.Getenv("EDGEBENCH_DB")
	if p.raw == "" {
		p.raw = "edgebench.db"
	}
	p.stderr = env.Stderr
	fs.Var(p, "db", "the store: a SQLite file, or a postgres:// URL (or EDGEBENCH_DB); its password from --db-password-file, PGPASSWORD or PGPASSFILE, not in the URL")
	fs.StringVar(&p.passwordFile, "db-password-file", env.Getenv("EDGEBENCH_DB_PASSWORD_FILE"), "file holding the PostgreSQL password (or EDGEBENCH_DB_PASSWORD_FILE)")
}

// dbFlag is --db with --db-password-file.
type dbFlag struct {
	raw          string
	typed        bool // given on the command line
	passwordFile string
	stderr       io.Writer
}

func (d *dbFlag) Set(s string) error { d.raw, d.typed = s, true; return nil }
func (d *dbFlag) String() string     { return d.raw }
func (d *dbFlag) Type() string       { return "string" }

// dsn is the store to open: --db with the password of --db-password-file.
// A password typed in --db is taken, with a warning: any user can read it
// in ps.
func (d *dbFlag) dsn() (string, error) {
	if !sqldb.IsPostgres(d.raw) {
		if d.passwordFile != "" {
			return "", cli.Usagef("--db-password-file is for a postgres:// --db, not %q", d.raw)
		}
		return d.raw, nil
	}
	u, err := url.Parse(d.raw)
	if err != nil {
		return "", cli.Usagef("--db: %q is not a URL", sqldb.RedactDB(d.raw))
	}
	_, inURL := u.User.Password()
	q := u.Query()
	inURL = inURL || q.Has("password")
	if d.passwordFile == "" {
		if inURL && d.typed && d.stderr != nil {
			fmt.Fprintln(d.stderr, "edgebench-collector: warning: --db carries a password, which any user of this machine can read in ps: use --db-password-file, EDGEBENCH_DB or PGPASSFILE")
		}
		return d.raw, nil
	}
	if inURL {
		return "", cli.Usagef("--db carries a password and --db-password-file gives one: keep the file")
	}
	b, err := os.ReadFile(d.passwordFile)
	if err != nil {
		return "", cli.Usagef("--db-password-file: %v", err)
	}
	pw := strings.TrimRight(string(b), "\r\n")
	if pw == "" || strings.ContainsAny(pw, "\r\n") {
		return "", cli.Usagef("--db-password-file %s: want the password on one line", d.passwordFile)
	}
	q.Set("password", pw)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// openDB opens an existing store for the reading commands: a SQLite file
// must be there already; a PostgreSQL database is migrated if need be.
func openDB(ctx context.Context, db dbFlag) (*store.Store, error) {
	dsn, err := db.dsn()
	if err != nil {
		return nil, err
	}
	if !sqldb.IsPostgres(dsn) {
		if _, err := os.Stat(dsn); err != nil {
			return nil, fmt.Errorf("store %s: %w (start 'edgebench-collector serve' or pass --db)", dsn, err)
		}
	}
	return store.Open(ctx, dsn)
}

// filterFlags are the run filters the reading commands share.
type filterFlags struct {
	db     dbFlag
	f      store.Filter
	labels cli.Pairs
	since  time.Duration
}

func addFilterFlags(fs *cli.FlagSet, env *cli.Env, ff *filterFlags) {
	ff.labels = cli.Pairs{}
	dbVar(fs, env, &ff.db)
	fs.StringVar(&ff.f.Fleet, "fleet", "", "only this fleet")
	fs.StringVar(&ff.f.Device, "device", "", "only this device")
	fs.StringVar(&ff.f.Command, "cmd", "", "only the results of this command")
	fs.Var(ff.labels, "label", "only runs with label k=v (repeatable)")
	fs.DurationVar(&ff.since, "since", 0, "only runs the collector received within this long ago")
	fs.BoolVar(&ff.f.ExcludeThrottled, "exclude-throttled", false, "leave out runs during which the device throttled")
	fs.BoolVar(&ff.f.ExcludeInvalid, "exclude-invalid", false, "compare: leave out runs whose verdict says their figure does not stand")
}

func (ff *filterFlags) filter() store.Filter {
	f := ff.f
	f.Labels = ff.labels
	if ff.since > 0 {
		f.Since = time.Now().Add(-ff.since)
	}
	return f
}

func cmdDevices(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("devices", "edgebench-collector devices [flags]", env.Stderr)
	var db dbFlag
	dbVar(fs, env, &db)
	format := formatFlag(fs)
	asJSON := fs.Bool("json", false, "the same as --format json")
	addresses := fs.Bool("addresses", false, "the devices' addresses, one per line, as their births report them: a policy.fleet_file for the loaders of runs across two devices (every page)")
	fleet := fs.String("fleet", "", "only this fleet")
	limit := fs.Int("limit", store.MaxPage, fmt.Sprintf("at most N devices, by fleet and id (1 to %d)", store.MaxPage))
	afterFlag := fs.String("after", "", "the devices after this one (FLEET/DEVICE, as the last page said)")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	if err := checkFormat(*format); err != nil {
		return err
	}
	if *addresses && (*asJSON || *format != "text") {
		return cli.Usagef("--addresses writes a fleet file: no --format with it")
	}
	if *limit < 1 || *limit > store.MaxPage {
		return cli.Usagef("--limit %d: want 1 to %d (then --after the last one)", *limit, store.MaxPage)
	}
	after, err := store.ParseDeviceCursor(*afterFlag)
	if err != nil {
		return cli.Usagef("--after: %v", err)
	}
	s, err := openDB(ctx, db)
	if err != nil {
		return err
	}
	defer s.Close()
	// A page, or with --addresses every page: a fleet file names every
	// board.
	var devs []store.Device
	for {
		page, err := s.DevicesAfter(ctx, after, *limit)
		if err != nil {
			return err
		}
		devs = append(devs, page.Devices...)
		next := page.Next.String()
		if next == "" {
			break
		}
		if !*addresses {
			defer fmt.Fprintf(env.Stderr, "more devices: edgebench-collector devices --after %s\n", next)
			break
		}
		after = page.Next
	}
	if *fleet != "" {
		kept := devs[:0]
		for _, d := range devs {
			if d.Fleet == *fleet {
				kept = append(kept, d)
			}
		}
		devs = kept
	}
	if *addresses {
		return writeFleetFile(env.Stdout, devs)
	}
	if *asJSON || *format == "json" {
		return writeJSON(env.Stdout, devs)
	}
	escape.MakePrintable(devs)
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FLEET\tDEVICE\tSTATE\tBOARD\tOS\tLABELS\tLAST SEEN\tLAST RUN")
	for _, d := range devs {
		board, osName := "-", "-"
		if d.Info != nil {
			board, osName = orDash(d.Info.Board), orDash(d.Info.OS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Fleet, d.ID, orDash(d.State), board, osName, orDash(group.LabelString(d.Labels)),
			when(d.LastSeen), orDash(d.LastResult))
	}
	return tw.Flush()
}

// writeFleetFile writes the addresses the devices report in their births
// as an agent's policy.fleet_file reads them: one per line, the device
// in a comment. An address that is no board's (unspecified, multicast,
// broadcast), which would make an agent refuse the whole file, is left
// out with a comment saying so.
func writeFleetFile(w io.Writer, devs []store.Device) error {
	fmt.Fprintln(w, "# The fleet's boards as their births report their addresses (edgebench-collector devices --addresses),")
	fmt.Fprintln(w, "# for policy.fleet_file: a loader may then load these and no other host. Each address is what")
	fmt.Fprintln(w, "# its device says of itself: check the list before a loader trusts it.")
	seen := map[netip.Addr]string{}
	for _, d := range devs {
		name := escape.Printable(d.Fleet + "/" + d.ID)
		if d.Info == nil || len(d.Info.Addrs) == 0 {
			fmt.Fprintf(w, "# %s reports no address\n", name)
			continue
		}
		for _, s := range d.Info.Addrs {
			a, err := netip.ParseAddr(s)
			a = a.Unmap()
			switch {
			case err != nil || a.Zone() != "":
				fmt.Fprintf(w, "# %s reports %q: not an address, left out\n", name, escape.Printable(s))
			case a.IsUnspecified() || a.IsMulticast() || a.IsLoopback() || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
				fmt.Fprintf(w, "# %s reports %s: no board's address, left out\n", name, a)
			case seen[a] != "":
				fmt.Fprintf(w, "# %s reports %s too, as %s does\n", name, a, seen[a])
			default:
				seen[a] = name
				fmt.Fprintf(w, "%s\t# %s\n", a, name)
			}
		}
	}
	return nil
}

func cmdRuns(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("runs", "edgebench-collector runs [flags]", env.Stderr)
	var ff filterFlags
	addFilterFlags(fs, env, &ff)
	fs.IntVar(&ff.f.Limit, "limit", 20, "newest N results (0: all)")
	beforeFlag := fs.String("before", "", "the results received before this cursor (as the last page said)")
	format := formatFlag(fs)
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	if err := checkFormat(*format); err != nil {
		return err
	}
	if ff.f.Limit < 0 {
		return cli.Usagef("--limit %d: want 0 (all) or more", ff.f.Limit)
	}
	before, err := store.ParseCursor(*beforeFlag)
	if err != nil {
		return cli.Usagef("--before: %v", err)
	}
	s, err := openDB(ctx, ff.db)
	if err != nil {
		return err
	}
	defer s.Close()
	f := ff.filter()
	f.Before = before
	if f.Limit > 0 {
		f.Limit++ // one more: is there a next page?
	}
	rows, err := s.Runs(ctx, f)
	if err == nil && f.Limit > 0 && len(rows) == f.Limit {
		rows = rows[:len(rows)-1]
		defer fmt.Fprintf(env.Stderr, "more runs: edgebench-collector runs --before %s (with the same filters)\n", rows[len(rows)-1].Cursor())
	}
	if err == nil {
		err = s.AddVerdicts(ctx, rows)
	}
	if err != nil {
		return err
	}
	if *format == "json" {
		list := make([]json.RawMessage, len(rows))
		for i := range rows {
			if list[i], err = nullJSON(rows[i]); err != nil {
				return err
			}
		}
		return writeJSON(env.Stdout, list)
	}
	escape.MakePrintable(rows)
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tDEVICE\tSTARTED\tOUTCOME\tSPEC\tLABELS\tN\tMEAN REQ/S\tMEAN P50\tMEAN P99\tTOTAL ERRORS\tMEAN CPU %\tVERDICT\tFLAGS")
	for _, r := range rows {
		flags := ""
		if r.Throttled {
			flags = "throttled"
		}
		if r.Stable != "" {
			flags = strings.TrimPrefix(flags+", "+r.Stable, ", ")
		}
		if r.Loader != "" {
			flags = strings.TrimPrefix(flags+", loaded from "+r.Loader, ", ")
		}
		figures := fmt.Sprintf("%s\t%s\t%s\t%d\t%s\t%s", num(r.RPS), lat(r.P50US), lat(r.P99US), r.Errors, num(r.CPUPct), orDash(r.Verdict))
		outcome := r.Outcome
		if r.Outcome != string(wire.StateSucceeded) { // no figure of work that failed: why instead
			figures = "-\t-\t-\t-\t-\t-"
			if r.Reason != "" {
				outcome += ": " + r.Reason
			}
		}
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.Fleet, r.Device, r.Started.Format("2006-01-02 15:04:05"),
			outcome, r.Spec, orDash(group.LabelString(r.Labels)), r.Runs, figures, flags)
	}
	return tw.Flush()
}

// formatFlag adds --format text|json, of the listing commands.
func formatFlag(fs *cli.FlagSet) *string {
	return fs.String("format", "text", "text (a table) or json")
}

func checkFormat(format string) error {
	if format != "text" && format != "json" {
		return cli.Usagef("--format %q: want text or json", format)
	}
	return nil
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// nullJSON is the JSON of the struct v as encoding/json writes it, except
// that a figure that was not measured (NaN, infinite) is null rather than
// an error.
func nullJSON(v any) (json.RawMessage, error) {
	rv := reflect.ValueOf(v)
	var b bytes.Buffer
	b.WriteByte('{')
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fv := rv.Field(i)
		if (opts == "omitempty" || opts == "omitzero") && fv.IsZero() {
			continue
		}
		var val []byte
		if fv.Kind() == reflect.Float64 && (math.IsNaN(fv.Float()) || math.IsInf(fv.Float(), 0)) {
			val = []byte("null")
		} else {
			var err error
			if val, err = json.Marshal(fv.Interface()); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func cmdShow(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("show", "edgebench-collector show RUN [flags] (RUN: an id, a unique prefix of one, or last)", env.Stderr)
	var db dbFlag
	dbVar(fs, env, &db)
	format := fs.String("format", "edgebench", "report: edgebench, ab, wrk or json")
	idx := fs.Int("run", -1, "only this repetition (from 0); default all")
	rest, err := fs.Parse(args)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return cli.Usagef("want one RUN: edgebench-collector show RUN")
	}
	switch *format {
	case "edgebench", "ab", "wrk", "json":
	default:
		return cli.Usagef("--format %q: want edgebench, ab, wrk or json", *format)
	}
	s, err := openDB(ctx, db)
	if err != nil {
		return err
	}
	defer s.Close()
	id, err := s.ResultIDPrefix(ctx, rest[0])
	if err != nil {
		return err
	}
	res, kept, err := s.ResultKept(ctx, id)
	if err != nil {
		return err
	}
	if *idx >= len(res.Runs) {
		return cli.Usagef("--run %d: result %s has runs 0 to %d", *idx, id, len(res.Runs)-1)
	}
	if kept.SamplesPruned && *format != "json" {
		figs, err := s.RunFigures(ctx, id)
		if err != nil {
			return err
		}
		return show.Pruned(env.Stdout, res, figs, *idx)
	}
	return show.Write(env.Stdout, res, *format, *idx)
}

func cmdCompare(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("compare", "edgebench-collector compare --by device|LABEL|FIELD [flags]", env.Stderr)
	var ff filterFlags
	addFilterFlags(fs, env, &ff)
	by := fs.String("by", "device", "group by device, a run label (server, build ...) or a system-info field (board, os, kernel, arch, cpu_governor ...)")
	metric := fs.String("metric", "rps,p50,p99", "figures to test, comma-separated: "+strings.Join(compare.MetricNames(), ", "))
	base := fs.String("base", "", "the group the others are compared to (default the first seen)")
	format := fs.String("format", "text", "text or json")
	columns := fs.String("columns", "default", "the tables' columns, comma-separated metrics ("+strings.Join(compare.MetricNames(), ", ")+
		"), or seed (the seeds' table: mean, stdev, peak, requests, timeouts, user %, idle %), all or default")
	samePath := fs.Bool("same-path", false, "compare one page served by different hosts (each device its own URL) in one table: URLs count by their path")
	maxRuns := fs.Int("max-runs", compare.DefaultMaxRuns, "read at most this many runs, the newest received (0: all)")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	if *format != "text" && *format != "json" {
		return cli.Usagef("--format %q: want text or json", *format)
	}
	cols, err := compare.ParseColumns(*columns)
	var cqe *compare.QueryError
	if errors.As(err, &cqe) {
		return cli.Usagef("--columns: %s", cqe.Msg)
	}
	if *maxRuns < 0 {
		return cli.Usagef("--max-runs %d: want 0 (all) or more", *maxRuns)
	}
	if *maxRuns == 0 {
		*maxRuns = -1 // compare's "no bound"
	}
	metrics := strings.Split(*metric, ",")
	for _, m := range metrics {
		if _, ok := compare.MetricByName(m); !ok {
			return cli.Usagef("--metric %q: want %s", m, strings.Join(compare.MetricNames(), ", "))
		}
	}
	s, err := openDB(ctx, ff.db)
	if err != nil {
		return err
	}
	defer s.Close()
	c, err := compare.Runs(ctx, s, compare.Options{By: *by, Metrics: metrics, Base: *base, Filter: ff.filter(), Columns: cols,
		SamePath: *samePath, MaxRuns: *maxRuns})
	var qe *compare.QueryError
	if errors.As(err, &qe) {
		return cli.Usagef("%s", qe.Msg)
	}
	if err != nil {
		return err
	}
	if *format == "json" {
		return c.WriteJSON(env.Stdout)
	}
	return c.WriteText(env.Stdout)
}

func cmdExport(ctx context.Context, env *cli.Env, args []string) error {
	fs := cli.NewFlagSet("export", "edgebench-collector export --format csv|json|benchfmt [flags]", env.Stderr)
	var ff filterFlags
	addFilterFlags(fs, env, &ff)
	format := fs.String("format", "csv", "csv, json or benchfmt (Go benchmark lines for benchstat)")
	if err := fs.ParseNoArgs(args); err != nil {
		return err
	}
	switch *format {
	case "csv", "json", "benchfmt":
	default:
		return cli.Usagef("--format %q: want csv, json or benchfmt", *format)
	}
	s, err := openDB(ctx, ff.db)
	if err != nil {
		return err
	}
	defer s.Close()
	return compare.Export(ctx, env.Stdout, s, *format, ff.filter())
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func lat(us float64) string {
	switch {
	case math.IsNaN(us):
		return "-"
	case us >= 1e6:
		return strconv.FormatFloat(us/1e6, 'f', 2, 64) + "s"
	case us >= 1e3:
		return strconv.FormatFloat(us/1e3, 'f', 2, 64) + "ms"
	}
	return strconv.FormatFloat(us, 'f', 0, 64) + "µs"
}
