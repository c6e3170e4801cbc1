//go:build linux

package material

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// stuckOn finds what a child process waits on forever: the named pipe it
// is opening (by a name relative to its directory, or through a shell
// that started it), and a device it keeps open (only once it was open at
// the look before). A process that waits on nothing, holding /dev/null,
// is not stopped.
func TestStuckOn(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip(err)
	}
	if !watchable() {
		t.Skip("no /proc")
	}
	tty := openTerminal(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
		// looks is how many looks find it: 1 for a pipe, 2 for a device.
		looks int
	}{
		{"a named pipe opened by a relative name", []string{"cat", "pipe"}, pipe, 1},
		{"a named pipe opened by a shell's child", []string{"sh", "-c", "cat pipe; echo"}, pipe, 1},
		{"a device read on end", []string{"sh", "-c", "cat /dev/zero > /dev/null"}, "/dev/zero", 2},
		{"nothing", []string{"sh", "-c", "sleep 30 < /dev/null; echo"}, "", 0},
		{"a terminal read", []string{"sh", "-c", "cat " + tty + " > /dev/null"}, tty, 2},
		{"a terminal held to write to", []string{"sh", "-c", "exec 3>" + tty + "; sleep 30; echo"}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(tc.args[0], tc.args[1:]...)
			cmd.Dir = dir
			if err := cmd.Start(); err != nil {
				t.Skip(err)
			}
			// stop kills the shell's children too: a cat left behind would
			// read /dev/zero on end.
			defer func() {
				kids := family(cmd.Process.Pid)[1:]
				stop(cmd.Process)
				cmd.Wait()
				for _, k := range kids {
					for end := time.Now().Add(5 * time.Second); alive(k); time.Sleep(10 * time.Millisecond) {
						if time.Now().After(end) {
							t.Errorf("process %d, which the command started, still runs", k)
							break
						}
					}
				}
			}()
			held := map[string]bool{}
			deadline := time.Now().Add(10 * time.Second)
			if strings.Contains(tc.name, "terminal") && tty == "" {
				t.Skip("no terminal to open")
			}
			if tc.looks == 0 {
				deadline = time.Now().Add(500 * time.Millisecond)
			}
			for looks := 1; time.Now().Before(deadline); looks++ {
				file, ok := stuckOn(cmd.Process.Pid, held)
				if ok {
					if tc.want == "" {
						t.Fatalf("stuck on %q; it waits on nothing", file)
					}
					if file != tc.want {
						t.Fatalf("stuck on %q; want %q", file, tc.want)
					}
					if tc.looks == 2 && looks < 2 {
						t.Fatalf("a device found at the first look")
					}
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			if tc.want != "" {
				t.Fatalf("not found stuck on %s", tc.want)
			}
		})
	}
	// A look at a process that has ended finds nothing.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip(err)
	}
	if file, ok := stuckOn(cmd.Process.Pid, map[string]bool{}); ok {
		t.Fatalf("an ended process stuck on %q", file)
	}
}

// alive reports whether the process pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}

// openTerminal opens a new pseudo-terminal for the test and returns the
// name of its terminal end, or "" when there is none to open.
func openTerminal(t *testing.T) string {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return ""
	}
	t.Cleanup(func() { unix.Close(fd) })
	if unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0) != nil {
		return ""
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		return ""
	}
	return "/dev/pts/" + strconv.Itoa(n)
}
