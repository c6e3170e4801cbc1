// Package version implements "sot version": the module version, the commit
// and its date, and the Go version the binary was built with.
package version

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/sotlabs/sot/cli/cmdutil"
	"github.com/sotlabs/sot/internal/lazyre"
)

// Set with -ldflags "-X github.com/sotlabs/sot/cli/version.Version=v1.2.3
// -X github.com/sotlabs/sot/cli/version.Commit=abc123" by release builds.
var (
	Version = ""
	Commit  = ""
)

// Info is what "sot version" reports.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit"`
	// Date is when the commit was made, in UTC (RFC 3339), or "unknown".
	Date   string `json:"date"`
	Go     string `json:"go"`
	Module string `json:"module"`
}

// Get reads the build information of the running binary.
func Get() Info {
	info := Info{Version: Version, Commit: Commit, Go: runtime.Version(), Module: "github.com/sotlabs/sot"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" {
			info.Version = bi.Main.Version
		}
		if bi.Main.Path != "" {
			info.Module = bi.Main.Path
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && info.Commit == "" {
				info.Commit = s.Value
			}
			if s.Key == "vcs.time" && info.Date == "" {
				info.Date = s.Value
			}
			if s.Key == "vcs.modified" && s.Value == "true" && info.Commit != "" {
				info.Commit += "-dirty"
			}
		}
	}
	// "go install MODULE@version" stamps no VCS settings, but a
	// pseudo-version names the commit and its time.
	if m := pseudo.Re().FindStringSubmatch(info.Version); m != nil {
		if info.Commit == "" {
			info.Commit = m[2]
		}
		if info.Date == "" {
			if t, err := time.Parse("20060102150405", m[1]); err == nil {
				info.Date = t.UTC().Format(time.RFC3339)
			}
		}
	}
	if info.Version == "" || info.Version == "(devel)" {
		info.Version = "devel"
	}
	if info.Commit == "" {
		info.Commit = "unknown"
	}
	if info.Date == "" {
		info.Date = "unknown"
	}
	return info
}

// pseudo matches the time and commit of a Go pseudo-version, such as
// v0.0.0-20261124071500-0123456789ab.
var pseudo = lazyre.New(`(?:^|[.-])(\d{14})-([0-9a-f]{12})(?:\+|$)`)

// Options are the inputs of "sot version".
type Options struct {
	IO   *cmdutil.IOStreams
	JSON bool
}

// NewCmd returns "sot version".
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	o := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, commit date and Go version of this sot binary",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return Run(o) },
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return cmd
}

// Run prints the build information of the running binary.
func Run(o *Options) error {
	info := Get()
	if o.JSON {
		enc := json.NewEncoder(o.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	fmt.Fprintf(o.IO.Out, "sot %s\ncommit: %s\ndate: %s\ngo: %s\nmodule: %s\n", info.Version, info.Commit, info.Date, info.Go, info.Module)
	return nil
}
