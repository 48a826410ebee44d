package verdict

import (
	"slices"
	"strings"

	"github.com/edgebench/edgebench/probe/machine"
)

// ServerCPU is the server's CPU over the run of in, in % of one core:
// its rows' summed, as the verdict counts it (gather); false when the
// probe did not see it.
func ServerCPU(in Input) (float64, bool) {
	if in.System == nil {
		return 0, false
	}
	var j judgement
	j.gather(in, &in.System.Summary)
	if !j.serverSeen() {
		return 0, false
	}
	return j.server.CPU.Mean, true
}

// gather finds the generator's row and the server's among sum's watched
// processes, and sums the server's. The generator is the row of role
// generator, or of Input.GeneratorPID. The server is every row of role
// server (what listens on the target's port, and what --watch names) or
// upstream (what the server hands its work to: php-fpm behind nginx): its
// CPU is theirs summed, its name theirs joined ("nginx with php-fpm8.2"),
// its cores their union (unknown when one row's are). A summary without
// roles (recorded before them, or built by a caller) takes its first row
// that is not the generator's as the server, as it did before roles.
func (j *judgement) gather(in Input, sum *machine.Summary) {
	roles := false
	for i := range sum.Procs {
		roles = roles || sum.Procs[i].Role != ""
	}
	for i := range sum.Procs {
		p := &sum.Procs[i]
		switch {
		case p.Role == machine.RoleGenerator || in.GeneratorPID > 0 && p.PID == in.GeneratorPID:
			if j.gen == nil {
				j.gen = p
			}
		case p.Role == machine.RoleServer || p.Role == machine.RoleUpstream || !roles && len(j.servers) == 0:
			j.servers = append(j.servers, p)
		}
	}
	switch len(j.servers) {
	case 0:
		return
	case 1:
		j.server = j.servers[0]
		return
	}
	agg := &machine.ProcSummary{Name: j.servers[0].Name, Role: machine.RoleServer}
	var names []string
	cores, known := map[int]bool{}, true
	for _, p := range j.servers {
		if p != j.servers[0] {
			names = append(names, p.Name)
		}
		agg.Count += p.Count
		if p.CPU != nil {
			if agg.CPU == nil {
				agg.CPU = &machine.Stat{}
			}
			agg.CPU.Mean += p.CPU.Mean
			agg.CPU.Max += p.CPU.Max // at most: the rows' maxima need not coincide
		}
		known = known && len(p.CPUs) > 0
		for _, c := range p.CPUs {
			cores[c] = true
		}
	}
	agg.Name += " with " + strings.Join(names, ", ")
	if known {
		for c := range cores {
			agg.CPUs = append(agg.CPUs, c)
		}
		slices.Sort(agg.CPUs)
	}
	j.server = agg
}

// shareName is a server's row as the CPU shares name it: an upstream with
// its server, "php-fpm8.2 (upstream of nginx)".
func shareName(p *machine.ProcSummary) string {
	if p.Role == machine.RoleUpstream && p.Of != "" {
		return p.Name + " (upstream of " + p.Of + ")"
	}
	return p.Name
}
