package corpus

import (
	"errors"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// ownStatHandles is false here: the stats go through the directory's
// descriptor, which any number of goroutines use at once without a lock.
const ownStatHandles = false

// statxMask asks statx for what the walk keeps of a stat.
const statxMask = unix.STATX_TYPE | unix.STATX_SIZE | unix.STATX_MTIME | unix.STATX_CTIME | unix.STATX_INO

// noStatx is set once statx turns out to be missing (a kernel before 4.11)
// or refused (a container's seccomp profile of that time): fstatat is
// used instead.
var noStatx atomic.Bool

// lstat reads the stat of the entry name (one element, from the
// directory's listing) without following a link: statx, or fstatat,
// relative to the directory's descriptor, as os.Root.Lstat does but
// without a lock, and into a value instead of an fs.FileInfo.
func (d dirHandle) lstat(name string) (entryStat, error) {
	fd := int(d.f.Fd()) // every handle has it here: no goroutine opens one of its own

	if !noStatx.Load() {
		var sx unix.Statx_t
		err := unix.Statx(fd, name, unix.AT_SYMLINK_NOFOLLOW, statxMask, &sx)
		if err == nil && sx.Mask&statxMask == statxMask {
			return entryStat{
				kind:  kindOfMode(uint32(sx.Mode)),
				size:  int64(sx.Size),
				mtime: sx.Mtime.Sec*1e9 + int64(sx.Mtime.Nsec),
				ctime: sx.Ctime.Sec*1e9 + int64(sx.Ctime.Nsec),
				ino:   sx.Ino,
			}, nil
		}
		if err == nil || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
			// A file system that leaves out part of the stat asked for,
			// or a system without statx: fstatat says all of it.
			if err != nil {
				noStatx.Store(true)
			}
		} else {
			return entryStat{}, &os.PathError{Op: "statx", Path: name, Err: err}
		}
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return entryStat{}, &os.PathError{Op: "fstatat", Path: name, Err: err}
	}
	return entryStat{
		kind:  kindOfMode(st.Mode),
		size:  st.Size,
		mtime: st.Mtim.Nano(),
		ctime: st.Ctim.Nano(),
		ino:   st.Ino,
	}, nil
}

// kindOfMode is the kind of file a stat's mode says.
func kindOfMode(mode uint32) entryKind {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return kindRegular
	case unix.S_IFDIR:
		return kindDir
	case unix.S_IFLNK:
		return kindLink
	}
	return kindOther
}
