//go:build linux

package material

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// watchable reports whether the processes this one starts can be looked
// at as they run (see stuckOn): /proc is there.
var watchable = sync.OnceValue(func() bool {
	_, err := os.Stat("/proc/self/wchan")
	return err == nil
})

// stuckOn looks at the process pid, a child of this one, and at the
// processes it started, for a file one of them waits on forever, and
// returns it:
//   - a named pipe it is opening: nothing will open the other end, and
//     the kernel keeps it in the open call (its wait channel is
//     wait_for_partner);
//   - a device other than /dev/null it holds open now and held open the
//     time before (held, updated here): reading /dev/zero never ends, and
//     a terminal waits for a key (a terminal counts only while the process
//     waits: one it writes to, as GIT_TRACE=/dev/tty has git do, does not).
//     A file open that briefly is no more than git reading its random
//     bytes;
//   - its own output, which it reads (waiting, at two looks in a row):
//     /dev/stdout named as a file to read.
//
// ok is false when none is found. The file is "" when a process waits on
// a pipe whose name cannot be read (see openingPath).
func stuckOn(pid int, held map[string]bool) (file string, ok bool) {
	seen := map[string]bool{}
	defer func() {
		clear(held)
		for k := range seen {
			held[k] = true
		}
	}()
	for _, p := range family(pid) {
		proc := "/proc/" + strconv.Itoa(p)
		w, _ := os.ReadFile(proc + "/wchan")
		if string(w) == "wait_for_partner" {
			return openingPath(proc), true
		}
		fds, err := os.ReadDir(proc + "/fd")
		if err != nil {
			continue
		}
		// Its output, which it may have been told to read (/dev/stdout as
		// an attributes file): it waits for what only it could write.
		out := map[string]string{}
		for fd, name := range map[string]string{"1": "/dev/stdout", "2": "/dev/stderr"} {
			if t, err := os.Readlink(proc + "/fd/" + fd); err == nil && strings.HasPrefix(t, "pipe:") {
				out[t] = name
			}
		}
		for _, fd := range fds {
			if n, err := strconv.Atoi(fd.Name()); err != nil || n < 3 {
				continue // what sot gave it: /dev/null and pipes
			}
			link := proc + "/fd/" + fd.Name()
			target, err := os.Readlink(link)
			if err != nil || target == "/dev/null" {
				continue
			}
			if name, ok := out[target]; ok && strings.Contains(string(w), "pipe_read") {
				key := strconv.Itoa(p) + " " + fd.Name() + " " + target
				seen[key] = true
				if held[key] {
					return name, true
				}
				continue
			}
			fi, err := os.Stat(link)
			if err != nil || fi.Mode()&os.ModeDevice == 0 {
				continue
			}
			if terminal(target) && string(w) != "wait_woken" {
				continue // written to (GIT_TRACE=/dev/tty), not waited on
			}
			key := strconv.Itoa(p) + " " + fd.Name() + " " + target
			seen[key] = true
			if held[key] {
				return target, true
			}
		}
	}
	return "", false
}

// terminal reports whether the device name is a terminal, which a
// process may hold open to write to it and wait on only when it reads.
func terminal(name string) bool {
	return strings.HasPrefix(name, "/dev/pts/") || strings.HasPrefix(name, "/dev/tty") || name == "/dev/console"
}

// family is pid and the processes it started, and theirs, as far as
// /proc tells: a git run through a wrapper script is the script's child.
func family(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out) && len(out) < 64; i++ {
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(out[i]) + "/task")
		if err != nil {
			continue
		}
		for _, t := range tasks {
			b, err := os.ReadFile("/proc/" + strconv.Itoa(out[i]) + "/task/" + t.Name() + "/children")
			if err != nil {
				continue
			}
			for _, f := range strings.Fields(string(b)) {
				if c, err := strconv.Atoi(f); err == nil {
					out = append(out, c)
				}
			}
		}
	}
	return out
}

// openingPath is the file the process at proc (its /proc directory) is
// opening, read from the arguments of its openat call and its memory, and
// made absolute against the directory the call names; "" when the call is
// not openat or the process's memory cannot be read (a kernel that allows
// no look into another process, even a child).
func openingPath(proc string) string {
	b, err := os.ReadFile(proc + "/syscall")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	if nr, err := strconv.Atoi(f[0]); err != nil || nr != unix.SYS_OPENAT {
		return ""
	}
	dirfd, err1 := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
	addr, err2 := strconv.ParseUint(strings.TrimPrefix(f[2], "0x"), 16, 64)
	if err1 != nil || err2 != nil {
		return ""
	}
	mem, err := os.Open(proc + "/mem")
	if err != nil {
		return ""
	}
	defer mem.Close()
	// The name may end near the end of a mapping: it is read a page at a
	// time, up to the limit of a path.
	var name []byte
	for len(name) < unix.PathMax {
		page := make([]byte, 4096-int((addr+uint64(len(name)))%4096))
		n, _ := mem.ReadAt(page, int64(addr)+int64(len(name)))
		if n == 0 {
			return ""
		}
		if i := bytes.IndexByte(page[:n], 0); i >= 0 {
			name = append(name, page[:i]...)
			break
		}
		name = append(name, page[:n]...)
	}
	p := string(name)
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	base := proc + "/cwd"
	if int32(dirfd) != unix.AT_FDCWD {
		base = proc + "/fd/" + strconv.Itoa(int(int32(dirfd)))
	}
	dir, err := os.Readlink(base)
	if err != nil {
		return p
	}
	return filepath.Join(dir, p)
}

// stop kills the process p, a child of this one, and the processes it
// started: a git run through a wrapper would otherwise be left waiting.
func stop(p *os.Process) {
	for _, pid := range family(p.Pid)[1:] {
		unix.Kill(pid, unix.SIGKILL)
	}
	p.Kill()
}
