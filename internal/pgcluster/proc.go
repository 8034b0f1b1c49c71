package pgcluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runAs is the OS user every pg_autoctl and psql runs as, with the
// environment they all share: pg_autoctl finds a node's configuration and
// state under XDG_CONFIG_HOME and XDG_DATA_HOME, so every command about a
// node must see the same two.
type runAs struct {
	cred *syscall.Credential // nil when the test already runs as postgres
	env  []string
}

// newRunAs prepares commands run as the postgres user, whose files live
// under dir.
func newRunAs(dir string) (*runAs, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("%w: no postgres OS user to run pg_autoctl as: %v", ErrUnavailable, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	r := &runAs{env: []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + dir + "/config",
		"XDG_DATA_HOME=" + dir + "/data",
	}}
	switch os.Geteuid() {
	case uid:
	case 0:
		r.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: pg_autoctl runs as the postgres OS user: run as root or as postgres", ErrUnavailable)
	}
	return r, nil
}

// command makes a pg_autoctl (or other program) command run as postgres in
// a process group of its own.
func (r *runAs) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = r.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: r.cred}
	// On a timeout the whole group goes, not just pg_autoctl.
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// output runs a short pg_autoctl command and returns its standard output;
// its error carries the command's own messages.
func (r *runAs) output(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := r.command(ctx, "pg_autoctl", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("pg_autoctl %s: %w: %s", strings.Join(args, " "), err, tail(stderr.Bytes()))
	}
	return stdout.Bytes(), nil
}

// service is a long-running pg_autoctl (create … --run): a monitor or a
// node's keeper, and the postgres it starts, in one process group.
type service struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when pg_autoctl exited

	// killedOnPurpose is set by KillPrimary, so that the cluster's waits do
	// not take the node's end for a failure.
	killedOnPurpose bool
}

func (r *runAs) start(name, logPath string, args ...string) (*service, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := r.command(context.Background(), "pg_autoctl", args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	s := &service{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		f.Close()
		close(s.done)
	}()
	return s, nil
}

// exited reports whether pg_autoctl has ended.
func (s *service) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL to the whole process group: pg_autoctl, its
// subprocesses and the postgres it started. The group outlives its leader
// when the leader is gone first, so the signal goes even after pg_autoctl
// exited.
func (s *service) kill() {
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// alive reports whether any process of the group is left.
func (s *service) alive() bool {
	return syscall.Kill(-s.cmd.Process.Pid, 0) == nil
}

// tail returns the end of the service's log, for failure messages.
func (s *service) tail() string {
	b, _ := os.ReadFile(s.log)
	return tail(b)
}

func tail(b []byte) string {
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return strings.TrimSpace(string(b))
}
