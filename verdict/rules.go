package verdict

import (
	"cmp"
	"slices"
)

// This file is the verdict's table: each rule a row (resource, test,
// figure, precedence), each test in the file of its rule. Judge tries the
// rows of limits by precedence, and the first that applies names what
// limited the run, its reason the verdict's first; the rows of
// invalidations that apply, in their order, say why the figure does not
// stand. A run across two machines has a table of its own (network.go:
// twoLimits, twoInvalidations), which takes the loader's rows from these.
// README's table "Verdicts" lists the same rows, by their names, in the
// same order (TestREADMEListsTheRules).

// rule is one row of a verdict's table, read on a run's figures (J: one
// machine's judgement, or a two-machine run's).
type rule[J any] struct {
	// precedence orders the rows: of the limits that apply, the one of
	// the lowest precedence names the limit.
	precedence int
	// name is the row's in README's table: "server, all cores".
	name string
	// resource is what the row names as the limit (Verdict.LimitedBy);
	// "" for a row that only says the figure does not stand.
	resource string
	// test is the rule on the figures: its reason, with the figures it
	// quotes, when it applies; "" when it does not.
	test func(t Thresholds, j *J) string
}

type oneRule = rule[judgement]

// table is rows, by precedence.
func table[J any](rows ...rule[J]) []rule[J] {
	slices.SortStableFunc(rows, func(a, b rule[J]) int { return cmp.Compare(a.precedence, b.precedence) })
	return rows
}

// limits are the rules on what limited a run on one machine. The
// generator's come first: GeneratorBound is theirs, and a run they name
// is the generator's whatever else applies. The last always applies.
var limits = table(
	oneRule{10, "generator, its threads", Generator, Thresholds.generatorThreads},
	oneRule{20, "generator, open loop", Generator, Thresholds.generatorBehind},
	oneRule{30, "generator, starved", Generator, Thresholds.generatorStarved},
	oneRule{40, "generator, shared cores", Generator, Thresholds.generatorShared},
	oneRule{50, "errors", Errors, Thresholds.errorsLimit},
	oneRule{60, "rate", Rate, Thresholds.rateReached},
	oneRule{70, "server, all cores", Server, Thresholds.serverAllCores},
	oneRule{80, "server, whole cores", Server, Thresholds.serverWholeCores},
	oneRule{90, "server, its cores", CPU, Thresholds.serverCoresTaken},
	oneRule{100, "network", Network, Thresholds.linkLimit},
	oneRule{110, "disk", Disk, Thresholds.diskLimit},
	oneRule{120, "memory", Memory, Thresholds.memoryLimit},
	oneRule{130, "cpu, steal", CPU, Thresholds.stealLimit},
	oneRule{140, "cpu, saturated", CPU, Thresholds.coresSaturated},
	oneRule{150, "cpu, one core", CPU, Thresholds.oneCoreHeld},
	oneRule{160, "network, the path", Network, Thresholds.pathLimit},
	oneRule{170, "cpu, close to saturated", CPU, Thresholds.coresNear},
	oneRule{180, "server, listen backlog", Server, Thresholds.listenBacklog},
	oneRule{190, "server, no response", Server, Thresholds.noResponse},
	oneRule{200, "connections, open loop", Connections, Thresholds.connectionsBehind},
	oneRule{210, "server, machine not seen", Server, Thresholds.machineUnseen},
	oneRule{220, "connections", Connections, Thresholds.connectionsCarry},
	oneRule{230, "server, nothing saturated", Server, Thresholds.nothingSaturated},
)

// invalidations are the rules on whether a run's figure stands: each that
// applies says why it does not, in this order (valid.go).
var invalidations = table(
	oneRule{10, "other processes", "", Thresholds.otherProcesses},
	oneRule{20, "throttling", "", Thresholds.throttled},
	oneRule{30, "generator", "", Thresholds.generatorLimited},
	oneRule{40, "rate", "", Thresholds.rateShortOf},
	oneRule{50, "errors", "", Thresholds.tooManyErrors},
	oneRule{60, "server, listen backlog", "", Thresholds.listenBacklog},
	oneRule{70, "server, no response", "", Thresholds.noResponse},
	oneRule{80, "too few requests", "", Thresholds.tooFewRequests},
)

// Judge says what limited the run of in and whether its figure stands.
func (t Thresholds) Judge(in Input) Verdict {
	j := t.judge(in)
	by, why := decide(t, limits, &j)
	return verdictOf(by, why, reasons(t, invalidations, &j))
}

// decide is the resource and the reason of the first of rows that
// applies to j.
func decide[J any](t Thresholds, rows []rule[J], j *J) (resource, why string) {
	for _, r := range rows {
		if why := r.test(t, j); why != "" {
			return r.resource, why
		}
	}
	return "", ""
}

// reasons are the reasons of the rows that apply to j, in their order.
func reasons[J any](t Thresholds, rows []rule[J], j *J) []string {
	var out []string
	for _, r := range rows {
		if why := r.test(t, j); why != "" {
			out = append(out, why)
		}
	}
	return out
}

// verdictOf is the verdict of a run limited by resource for why, whose
// figure the reasons of invalid say does not stand: why first, then
// those, why not twice.
func verdictOf(resource, why string, invalid []string) Verdict {
	v := Verdict{LimitedBy: resource, Valid: len(invalid) == 0, Reasons: []string{why}}
	for _, r := range invalid {
		if r != why {
			v.Reasons = append(v.Reasons, r)
		}
	}
	return v
}
