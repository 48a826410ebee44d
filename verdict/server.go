package verdict

import (
	"fmt"
	"math"
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

// serverCores is the number of cores a server may use: those of its
// affinity (cpus: taskset, worker_cpu_affinity, CPUAffinity=), else every
// core of its machine's.
func serverCores(cpus []int, cores int) int {
	if cpus != nil {
		return len(cpus)
	}
	return cores
}

// The server's rules, on this machine and (JudgeTwo) on a two-machine
// run's target: of names its machine as the reasons say it, "" for the
// run's own, "the target" for the target.

// allCores: a server (name, at cpu % of one core) at ServerAllCores % of
// the cores it may use.
func (t Thresholds) allCores(name string, cpu float64, cpus []int, cores int, of string) string {
	n := serverCores(cpus, cores)
	all := 100 * float64(n)
	switch {
	case n == 0 || cpu < all*t.ServerAllCores/100:
		return ""
	case cpus != nil:
		return fmt.Sprintf("%s at %.0f %% of %s%s, %s it may use", name, cpu, cpuList(cpus), onThe(of), theCores(n))
	}
	whose := "the "
	if of != "" {
		whose = possessive(of)
	}
	return fmt.Sprintf("%s at %.0f %% of %s%d cores", name, cpu, whose, cores)
}

// wholeCores: a server's processes (name, count of them at cpu % of one
// core) within ServerWholeCore %..100 % (+3) of a whole number of cores:
// single-threaded workers at their limit.
func (t Thresholds) wholeCores(name string, cpu float64, count int, of string) string {
	if k := math.Round(cpu / 100); k >= 1 && cpu >= k*t.ServerWholeCore && cpu <= k*100+3 {
		return fmt.Sprintf("%s at %.0f %% of %s%s (%d process%s): its busy workers each hold a full core",
			name, cpu, coresText(int(k)), onThe(of), count, pluralES(count))
	}
	return ""
}

// coresTaken: a server pinned to some cores (cpus), those CPUBusy %
// busy while it had cpu % of one core of them: other processes took the
// rest.
func (t Thresholds) coresTaken(sum *machine.Summary, name string, cpu float64, cpus []int, of string) string {
	busy, n := coresBusy(sum, cpus)
	if n == len(cpus) && busy >= t.CPUBusy {
		return fmt.Sprintf("%s, %s %s may use%s, %.0f %% busy, %s %.0f %% of it: other processes took the rest",
			cpuList(cpus), theCores(n), name, onThe(of), busy, name, cpu)
	}
	return ""
}

// serverAllCores: the server, its rows summed, at its cores.
func (t Thresholds) serverAllCores(j *judgement) string {
	if !j.serverSeen() {
		return ""
	}
	return t.allCores(j.serverName, j.serverCPU, j.serverCPUs, j.cores, "")
}

// serverWholeCores: single-threaded workers at their limit: the
// server's, or one of its parts' (php-fpm's workers behind nginx).
func (t Thresholds) serverWholeCores(j *judgement) string {
	if !j.serverSeen() || serverCores(j.serverCPUs, j.cores) == 0 {
		return ""
	}
	parts := []*machine.ProcSummary{j.server}
	if len(j.servers) > 1 {
		parts = append(parts, j.servers...)
	}
	for _, p := range parts {
		if p.CPU == nil {
			continue
		}
		if why := t.wholeCores(p.Name, p.CPU.Mean, p.Count, ""); why != "" {
			return why
		}
	}
	return ""
}

// serverCoresTaken: the server pinned to cores that other processes
// took: it could not get what its cores had.
func (t Thresholds) serverCoresTaken(j *judgement) string {
	if j.serverCPUs == nil || !j.serverSeen() {
		return ""
	}
	return t.coresTaken(j.sum, j.serverName, j.serverCPU, j.serverCPUs, "")
}

// onThe is where the machine of is, as a reason says it: "", or " on
// the target".
func onThe(of string) string {
	if of == "" {
		return ""
	}
	return " on " + of
}

// possessive is of's, as a reason says it: "", or "the target's ".
func possessive(of string) string {
	if of == "" {
		return ""
	}
	return of + "'s "
}
