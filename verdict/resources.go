package verdict

import (
	"fmt"

	"github.com/edgebench/edgebench/probe/machine"
)

// These are the rules on a machine's resources, the USE method's: disks,
// memory and the cores (a link's are in network.go). The rules on disks
// and memory are the same on this machine and on a two-machine run's
// target (of names it, as server.go's).

// diskBusy: a whole disk (not a partition) DiskBusy % busy, or IO
// pressure of IOPressure %.
func (t Thresholds) diskBusy(sum *machine.Summary, of string) string {
	for _, d := range sum.Disks {
		if !d.Partition && d.Busy.Mean >= t.DiskBusy {
			return fmt.Sprintf("%sdisk %s %.0f %% busy", possessive(of), d.Name, d.Busy.Mean)
		}
	}
	if p := sum.PSI; p != nil && p.IOSome != nil && p.IOSome.Mean >= t.IOPressure {
		return fmt.Sprintf("IO pressure %.0f %%%s (some tasks stalled on IO)", p.IOSome.Mean, onThe(of))
	}
	return ""
}

// memoryShort: memory pressure of MemPressure %, or less than
// MemAvailable % of the memory available.
func (t Thresholds) memoryShort(sum *machine.Summary, of string) string {
	if p := sum.PSI; p != nil && p.MemSome != nil && p.MemSome.Mean >= t.MemPressure {
		return fmt.Sprintf("memory pressure %.0f %%%s (some tasks stalled on memory)", p.MemSome.Mean, onThe(of))
	}
	if m := sum.Mem; m != nil && m.Available != nil && m.Total > 0 {
		if pct := 100 * m.Available.Mean / float64(m.Total); pct < t.MemAvailable {
			return fmt.Sprintf("%.1f %% of %smemory available", pct, possessive(of))
		}
	}
	return ""
}

func (t Thresholds) diskLimit(j *judgement) string {
	if j.sum == nil {
		return ""
	}
	return t.diskBusy(j.sum, "")
}

func (t Thresholds) memoryLimit(j *judgement) string {
	if j.sum == nil {
		return ""
	}
	return t.memoryShort(j.sum, "")
}

// stealLimit: a virtual machine's host took Steal % of the CPU.
func (t Thresholds) stealLimit(j *judgement) string {
	if sum := j.sum; sum != nil && sum.CPU != nil && sum.CPU.Steal.Mean >= t.Steal {
		return fmt.Sprintf("the host took %.0f %% of the CPU (steal)", sum.CPU.Steal.Mean)
	}
	return ""
}

// coresSaturated: the machine CPUBusy % busy, with who had its cores:
// other processes, or the server and edgebench; a server not watched is
// not told from other processes.
func (t Thresholds) coresSaturated(j *judgement) string {
	if j.busy >= t.CPUBusy && j.cores > 0 {
		switch {
		case !j.serverSeen():
			return fmt.Sprintf("the cores were %.0f %% busy: %s (--watch the server to tell it from other processes)", j.busy, j.cpuShares(j.sum))
		case j.other >= t.OtherCPU:
			return fmt.Sprintf("the cores were %.0f %% busy, other processes took them: %s", j.busy, j.cpuShares(j.sum))
		default:
			return fmt.Sprintf("the cores were %.0f %% busy, shared by the server and edgebench: %s", j.busy, j.cpuShares(j.sum))
		}
	}
	return ""
}

// oneCoreHeld: a core held while the machine was not: a single thread's
// limit, the server's when it is not watched to say so.
func (t Thresholds) oneCoreHeld(j *judgement) string {
	if !j.serverSeen() && j.busy >= 0 && j.busy < t.CPUBusy {
		for _, c := range j.sum.PerCPUBusy {
			if c.Mean >= t.CPUBusy {
				return fmt.Sprintf("cpu%d was %.0f %% busy while the machine was %.0f %%: one thread held it (--watch the server to name it)", c.ID, c.Mean, j.busy)
			}
		}
	}
	return ""
}

// coresNear: close to saturated: more connections add load, not cores.
func (t Thresholds) coresNear(j *judgement) string {
	if j.busy >= t.CPUNear && j.cores > 0 {
		return fmt.Sprintf("the cores were %.0f %% busy, close to saturated: %s", j.busy, j.cpuShares(j.sum))
	}
	return ""
}
