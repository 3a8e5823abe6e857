//go:build unix

package lambdatest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// LambdaVCPUMB is the memory size at which Lambda gives a function one
// full vCPU; below it, CPU is allocated in proportion to memory (AWS
// Lambda developer guide, "Configuring function memory").
const LambdaVCPUMB = 1769

// Limits approximate a Lambda function's memory setting under the emulator,
// which enforces neither memory nor CPU: the bootstrap runs in its own
// cgroup with a hard memory limit of MemoryMB (no swap) and a CFS quota of
// CPU × the period of one CPU, and sees MemoryMB as
// AWS_LAMBDA_FUNCTION_MEMORY_SIZE. The zero value is no limit (and 256).
type Limits struct {
	MemoryMB int
	// CPU is the share of one CPU (LambdaCPU(MemoryMB) for Lambda's
	// proportional allocation); 0 leaves CPU unlimited.
	CPU float64
	// PeriodUS is the CFS period in microseconds (0: 100,000, the kernel's
	// default; Lambda does not publish the one it uses).
	PeriodUS int
}

// LambdaCPU is the share of one vCPU Lambda allocates to memoryMB.
func LambdaCPU(memoryMB int) float64 { return float64(memoryMB) / LambdaVCPUMB }

// String names the limits as the benchmarks print them.
func (l Limits) String() string {
	if l.MemoryMB == 0 {
		return "unlimited"
	}
	if l.CPU == 0 {
		return fmt.Sprintf("%dMB", l.MemoryMB)
	}
	return fmt.Sprintf("%dMB-cpu%.3f", l.MemoryMB, l.CPU)
}

// sandbox is the cgroup pair (cpu and memory) one bootstrap runs in.
type sandbox struct {
	cpu, mem string // directories; v2 has one, in both
	v2       bool
}

// newSandbox creates the cgroups for l beside this process's own and
// removes them when the test ends (after the emulator, registered
// earlier, has been stopped: Cleanup runs last-in first-out).
func newSandbox(t testing.TB, name string, l Limits) *sandbox {
	t.Helper()
	sb, err := makeSandbox(fmt.Sprintf("lambdatest-%d-%s-%d", os.Getpid(), name, time.Now().UnixNano()), l)
	if err != nil {
		t.Fatalf("lambdatest: the %s limits need a writable cgroup (cgroup v1 cpu and memory controllers, or v2 with both delegated); run as root on Linux: %v", l, err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for _, dir := range sb.dirs() {
			for {
				err := syscall.Rmdir(dir)
				if err == nil || errors.Is(err, syscall.ENOENT) || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond) // the killed bootstrap leaves its cgroup once reaped
			}
		}
	})
	return sb
}

func (sb *sandbox) dirs() []string {
	if sb.v2 {
		return []string{sb.cpu}
	}
	return []string{sb.cpu, sb.mem}
}

func makeSandbox(name string, l Limits) (*sandbox, error) {
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	period := l.PeriodUS
	if period == 0 {
		period = 100_000
	}
	quota := -1
	if l.CPU > 0 {
		quota = max(1000, int(l.CPU*float64(period))) // the kernel's minimum quota is 1 ms
	}
	mem := strconv.Itoa(l.MemoryMB << 20)
	if dir, ok := own["unified-only"]; ok {
		sb := &sandbox{cpu: filepath.Join("/sys/fs/cgroup", dir.path, name), v2: true}
		sb.mem = sb.cpu
		q := "max"
		if quota > 0 {
			q = strconv.Itoa(quota)
		}
		return sb, mkCgroup(sb.cpu, map[string]string{"cpu.max": q + " " + strconv.Itoa(period), "memory.max": mem, "memory.swap.max": "0"})
	}
	sb := &sandbox{cpu: filepath.Join("/sys/fs/cgroup", own["cpu"].mount, own["cpu"].path, name), mem: filepath.Join("/sys/fs/cgroup", own["memory"].mount, own["memory"].path, name)}
	if err := mkCgroup(sb.cpu, map[string]string{"cpu.cfs_period_us": strconv.Itoa(period), "cpu.cfs_quota_us": strconv.Itoa(quota)}); err != nil {
		return nil, err
	}
	// memsw (memory + swap) only exists with swap accounting.
	files := map[string]string{"memory.limit_in_bytes": mem}
	if _, err := os.Stat(filepath.Join(filepath.Dir(sb.mem), "memory.memsw.limit_in_bytes")); err == nil {
		files["memory.memsw.limit_in_bytes"] = mem
	}
	if err := mkCgroup(sb.mem, files); err != nil {
		_ = syscall.Rmdir(sb.cpu)
		return nil, err
	}
	return sb, nil
}

// mkCgroup creates dir and writes the files in order of their names (the
// limit before memsw, which must not be below it).
func mkCgroup(dir string, files map[string]string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(files[n]), 0o644); err != nil {
			_ = syscall.Rmdir(dir)
			return fmt.Errorf("write %s: %w", filepath.Join(dir, n), err)
		}
	}
	return nil
}

type cgroupAt struct{ mount, path string }

// ownCgroups reads /proc/self/cgroup: for cgroup v1, each controller's
// mount directory (as named under /sys/fs/cgroup) and this process's path
// in it; for a v2-only system, "unified-only" with the path.
func ownCgroups() (map[string]cgroupAt, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	out := map[string]cgroupAt{}
	var unified string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			unified = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = cgroupAt{mount: parts[1], path: parts[2]}
		}
	}
	_, hasCPU := out["cpu"]
	_, hasMem := out["memory"]
	switch {
	case hasCPU && hasMem:
		return out, nil
	case unified != "":
		if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
			return map[string]cgroupAt{"unified-only": {path: unified}}, nil
		}
	}
	return nil, fmt.Errorf("no cpu and memory cgroup controllers in /proc/self/cgroup:\n%s", b)
}

// wrapper writes a script that moves itself into sb's cgroups and then
// runs bootstrap, so that only the bootstrap (not the emulator) is
// limited, from its first instruction.
func (sb *sandbox) wrapper(t testing.TB, bootstrap string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	for _, dir := range sb.dirs() {
		fmt.Fprintf(&b, "echo $$ > '%s/cgroup.procs' || exit 1\n", dir)
	}
	fmt.Fprintf(&b, "exec '%s'\n", bootstrap)
	p := filepath.Join(t.TempDir(), "bootstrap-limited")
	if err := os.WriteFile(p, []byte(b.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// PeakMemory returns the most memory the bootstrap's cgroup has held
// (memory.max_usage_in_bytes; v2 memory.peak), in bytes; 0 without
// limits.
func (f *Function) PeakMemory() int64 {
	if f.sandbox == nil {
		return 0
	}
	name := "memory.max_usage_in_bytes"
	if f.sandbox.v2 {
		name = "memory.peak"
	}
	b, err := os.ReadFile(filepath.Join(f.sandbox.mem, name))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// Throttled returns how often and for how long in all the kernel held the
// bootstrap back for its CPU quota (cpu.stat nr_throttled and
// throttled_time; v2 throttled_usec).
func (f *Function) Throttled() (periods int64, total time.Duration) {
	if f.sandbox == nil {
		return 0, 0
	}
	b, err := os.ReadFile(filepath.Join(f.sandbox.cpu, "cpu.stat"))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, " ")
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "nr_throttled":
			periods = n
		case "throttled_time": // v1: nanoseconds
			total = time.Duration(n)
		case "throttled_usec": // v2
			total = time.Duration(n) * time.Microsecond
		}
	}
	return periods, total
}

// PeakRSS returns the bootstrap's peak resident set (VmHWM of
// /proc/PID/status) in bytes, 0 if it cannot be read. The bootstrap is the
// emulator's child.
func (f *Function) PeakRSS() int64 {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", f.cmd.Process.Pid))
	for _, p := range tasks {
		b, _ := os.ReadFile(p)
		for _, pid := range strings.Fields(string(b)) {
			status, err := os.ReadFile("/proc/" + pid + "/status")
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(status), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
					return kb << 10
				}
			}
		}
	}
	return 0
}
