// Bench measures checkoutd against the budgets of DESIGN.md section 11: the
// merchant API's create and retrieve requests per second and their p50 and
// p99 latency, on SQLite and on PostgreSQL, each beside a bare net/http
// handler that returns a JSON body of the same size, measured in the same
// run as the ceiling, and beside stripe-mock, Stripe's own mock server, as a
// peer (built once at a pinned version, or -stripe-mock); webhook deliveries
// per second to a local HTTPS receiver and the latency from an event to its
// first attempt, beside bare signed posts to the same receiver; creates on
// a pg_auto_failover cluster with synchronous replication beside
// single-node PostgreSQL's (cluster.go); and, with -scale, retrieves among
// many stored sessions with the database's size.
//
// It starts everything it needs itself: checkoutd as serve wires it
// (server.New with request logs on) over real HTTP on a loopback listener,
// on a fresh SQLite file opened as in production (WAL, synchronous=FULL) and
// on a throwaway PostgreSQL schema that it drops afterwards. A fixed number of
// workers send requests back to back over keep-alive connections; every
// latency is recorded. It prints one table, or JSON with -json, and exits 1
// when a request failed. Run it from the repository root:
//
//	go run ./bench
//	go run ./bench -duration 10s -concurrency 32 -only sqlite,bare
//	go run ./bench -only bare,stripe-mock,sqlite -webhooks=false
//
// See bench/README.md for what it measures and how to read it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/checkoutd/checkoutd/checkout"
	"github.com/checkoutd/checkoutd/internal/gcfloor"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(1)
	}
}

// defaultPostgresURL is the tests' database, used when neither -postgres nor
// CHECKOUTD_TEST_DATABASE says otherwise.
const defaultPostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// targetNames lists what bench can measure, in the order of the table.
var targetNames = []string{"bare", "stripe-mock", "sqlite", "postgres", "cluster"}

// config is bench's configuration after parsing.
type config struct {
	targets     []string
	duration    time.Duration
	warmup      time.Duration
	concurrency int
	pool        int
	postgresURL string
	// stripeMock is the stripe-mock binary to run (-stripe-mock); empty
	// to build it into the user's cache directory when it is not there.
	stripeMock string
	dir        string
	json       bool
	cpuProfile string
	// trace is where -trace writes an execution trace (go tool trace).
	trace string
	// collector says how the garbage collector is set (collectorNote).
	collector string
	// profileRow, when set, limits the CPU profile and the execution trace
	// to the rows of that operation (create, retrieve, deliver: the drain,
	// or peak: the first attempts while the creates run at their peak),
	// one file per target (profileFile).
	profileRow string

	// The webhook rows: -webhooks, -endpoints, -backlog, -event-rate.
	webhooks  bool
	endpoints int
	backlog   int
	eventRate float64
	// scale are the numbers of stored sessions the scale rows read from,
	// in increasing order; none by default.
	scale []int
	// deliveries is how many deliveries the delivery-list rows load; 0
	// leaves the rows out.
	deliveries int
	// lists is the number of request logs, of events and of payments the
	// lists rows load (-lists); 0 for no lists rows.
	lists int
	// claimHistory is the number of finished deliveries the claim rows
	// load (-claim-history); 0 leaves the rows out.
	claimHistory int
	// bareBeside measures bare again right after each API row of another
	// target (beside.go).
	bareBeside bool
	// receiver is the run's webhook receiver.
	receiver *receiver
}

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pg := getenv("CHECKOUTD_TEST_DATABASE")
	if pg == "" {
		pg = defaultPostgresURL
	}
	only := fs.String("only", strings.Join(targetNames, ","), "comma-separated targets to measure: bare, stripe-mock, sqlite, postgres, cluster (ratios need bare and stripe-mock)")
	fs.DurationVar(&c.duration, "duration", 5*time.Second, "how long each row is measured")
	fs.DurationVar(&c.warmup, "warmup", time.Second, "how long each row runs before it is measured")
	fs.IntVar(&c.concurrency, "concurrency", 16, "concurrent workers, each with its own keep-alive connection")
	fs.IntVar(&c.pool, "pool", 1000, "sessions created before a retrieve row, which it reads round robin")
	fs.StringVar(&c.postgresURL, "postgres", pg, "PostgreSQL server to create a throwaway schema in (default: $CHECKOUTD_TEST_DATABASE)")
	fs.StringVar(&c.stripeMock, "stripe-mock", "", "stripe-mock binary to run (default: built once with go install "+stripeMockModule+"@"+stripeMockVersion+" into the user's cache directory)")
	fs.StringVar(&c.dir, "dir", os.TempDir(), "directory of the temporary SQLite file (put it on the disk production would use)")
	fs.BoolVar(&c.json, "json", false, "print JSON instead of a table")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run, client included, to this file")
	fs.StringVar(&c.trace, "trace", "", "write an execution trace of the whole run to this file, for go tool trace (where goroutines wait: -pprof=sched, -pprof=syscall)")
	fs.StringVar(&c.profileRow, "profile-row", "", "with -cpuprofile or -trace: profile or trace only the create, the retrieve, the deliver (drain) or the peak (first attempts while the creates run at their peak) rows, one file per target (cpu.prof: cpu-sqlite-create.prof)")
	fs.BoolVar(&c.webhooks, "webhooks", true, "measure webhook deliveries too")
	fs.IntVar(&c.endpoints, "endpoints", 8, "webhook endpoints of the drain row; each session's event goes to every one")
	fs.IntVar(&c.backlog, "backlog", 2000, "sessions whose events the drain row queues before it starts the dispatcher")
	fs.Float64Var(&c.eventRate, "event-rate", 50, "sessions created per second in the first-attempt row")
	fs.IntVar(&c.deliveries, "deliveries", 0, "deliveries to load for the dashboard's delivery-list rows, e.g. 1000000 (none by default)")
	scale := fs.String("scale", "", "comma-separated numbers of stored sessions to measure retrieves at, e.g. 10000,1000000 (none by default)")
	fs.IntVar(&c.lists, "lists", 0, "request logs, events and payments (each of a session of its own) to load for the dashboard lists rows, e.g. 1000000 (none by default)")
	fs.BoolVar(&c.bareBeside, "bare-beside", true, "measure bare again right after each create and retrieve row of another target, and compare the row with bare's mean just before and just after it")
	fs.IntVar(&c.claimHistory, "claim-history", 0, "finished deliveries to load for the webhook claim rows, e.g. 1000000 (none by default)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	for _, f := range strings.Split(*scale, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-scale: %q is not a positive number of sessions", f)
		}
		c.scale = append(c.scale, n)
	}
	slices.Sort(c.scale)
	c.scale = slices.Compact(c.scale)
	if c.deliveries < 0 || c.claimHistory < 0 {
		return nil, fmt.Errorf("-deliveries and -claim-history must not be negative")
	}
	if c.endpoints < 1 || c.endpoints > checkout.MaxEndpointsPerStore || c.backlog < 1 || c.eventRate <= 0 || c.eventRate > 1000 {
		return nil, fmt.Errorf("-endpoints must be 1 to %d, -backlog positive and -event-rate above 0 and at most 1000", checkout.MaxEndpointsPerStore)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("bench takes no arguments; got %q", fs.Args())
	}
	for _, t := range strings.Split(*only, ",") {
		t = strings.TrimSpace(t)
		if !slices.Contains(targetNames, t) {
			return nil, fmt.Errorf("-only: unknown target %q; known: %s", t, strings.Join(targetNames, ", "))
		}
		c.targets = append(c.targets, t)
	}
	// The table keeps its order whatever the order of -only.
	slices.SortFunc(c.targets, func(a, b string) int {
		return slices.Index(targetNames, a) - slices.Index(targetNames, b)
	})
	c.targets = slices.Compact(c.targets)
	if c.lists < 0 || c.lists > 0 && c.lists < 1000 {
		return nil, errors.New("-lists must be 0 (no lists rows) or at least 1000 rows")
	}
	if c.profileRow != "" && (!slices.Contains([]string{"create", "retrieve", "deliver", "peak"}, c.profileRow) || c.cpuProfile == "" && c.trace == "") {
		return nil, errors.New("-profile-row must be create, retrieve, deliver or peak, with -cpuprofile or -trace")
	}
	if c.duration <= 0 || c.warmup < 0 || c.concurrency < 1 || c.pool < 1 {
		return nil, errors.New("-duration and -pool must be positive, -concurrency at least 1 and -warmup not negative")
	}
	return c, nil
}

// run is the whole program: it measures every target of -only in turn and
// prints the table.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	// The collector as serve sets it: one process holds every target.
	defer gcfloor.Start(getenv, gcfloor.DefaultFloor)()
	cfg.collector = collectorNote(getenv)
	if cfg.profileRow == "" {
		stop, err := startProfiles(cfg.cpuProfile, cfg.trace)
		if err != nil {
			return err
		}
		defer stop()
	}
	cfg.receiver = newReceiver()
	defer cfg.receiver.close()
	rep := newReport(cfg)
	var bare *beside
	if cfg.bareBeside && slices.Contains(cfg.targets, "bare") && len(cfg.targets) > 1 {
		if bare, err = startBeside(ctx, cfg, stderr); err != nil {
			return err
		}
		defer bare.close()
	}
	for _, name := range cfg.targets {
		// Only bare and checkoutd deliver webhooks; stripe-mock sends none.
		hooks := cfg.webhooks && (name == "bare" || isCheckoutd(name))
		var after func(t *target, op string) error
		if bare != nil && name != "bare" {
			after = func(t *target, op string) error {
				if t.settle != nil {
					if err := t.settle(ctx); err != nil {
						return fmt.Errorf("settle %s after its %s row: %w", name, op, err)
					}
				}
				fmt.Fprintf(stderr, "bench: measuring bare %s beside %s\n", op, name)
				res, err := bare.measure(ctx, op)
				if err != nil {
					return fmt.Errorf("bare %s beside %s: %w", op, name, err)
				}
				rep.beside(op, res)
				return nil
			}
		}
		if err := runTarget(ctx, cfg, name, stderr, rep.add, after, rep, hooks); err != nil {
			return err
		}
		if name == "cluster" && rep.measuredTarget("cluster") {
			if err := measureSingleBeside(ctx, cfg, stderr, rep); err != nil {
				return err
			}
		}
	}
	for _, name := range cfg.targets {
		if !isCheckoutd(name) || len(cfg.scale) == 0 {
			continue
		}
		fmt.Fprintf(stderr, "bench: measuring %s at scale\n", name)
		if err := measureScale(ctx, cfg, name, stderr, rep); err != nil {
			return fmt.Errorf("%s at scale: %w", name, err)
		}
	}
	for _, name := range cfg.targets {
		if !isCheckoutd(name) || cfg.deliveries == 0 {
			continue
		}
		fmt.Fprintf(stderr, "bench: measuring %s's delivery list\n", name)
		if err := measureDeliveries(ctx, cfg, name, stderr, rep); err != nil {
			return fmt.Errorf("%s delivery list: %w", name, err)
		}
	}
	for _, name := range cfg.targets {
		if !isCheckoutd(name) || cfg.lists == 0 {
			continue
		}
		fmt.Fprintf(stderr, "bench: measuring %s lists\n", name)
		if err := measureLists(ctx, cfg, name, stderr, rep); err != nil {
			return fmt.Errorf("%s lists: %w", name, err)
		}
	}
	for _, name := range cfg.targets {
		if !isCheckoutd(name) || cfg.claimHistory == 0 {
			continue
		}
		fmt.Fprintf(stderr, "bench: measuring %s's webhook claim\n", name)
		if err := measureClaims(ctx, cfg, name, stderr, rep); err != nil {
			return fmt.Errorf("%s claim: %w", name, err)
		}
	}
	rep.Memory = readMemory()
	// The machine is noisy: the ceiling is measured again at the end, so
	// that a change of speed during the run shows.
	if slices.Contains(cfg.targets, "bare") && rep.measuredBeyondBare() {
		if err := runTarget(ctx, cfg, "bare", stderr, rep.recheck, nil, rep, false); err != nil {
			return err
		}
	}
	if err := rep.print(stdout); err != nil {
		return err
	}
	if n := rep.failed(); n > 0 {
		return fmt.Errorf("%d requests failed (see the errors column)", n)
	}
	if n := rep.deliveriesFailed(); n > 0 {
		return fmt.Errorf("%d delivery-list cases failed (see the table)", n)
	}
	return nil
}

// runTarget starts the named target, measures it, hands each row to record
// and then runs after (when set) for its operation, measures its webhook
// deliveries when hooks is set, and stops it. A target that cannot run here
// is reported as skipped.
func runTarget(ctx context.Context, cfg *config, name string, stderr io.Writer, record func(*target, string, *result), after func(t *target, op string) error, rep *report, hooks bool) error {
	fmt.Fprintf(stderr, "bench: measuring %s\n", name)
	t, err := startTarget(ctx, name, cfg, stderr)
	var skip skipError
	if errors.As(err, &skip) {
		rep.skip(name, skip.reason)
		if hooks {
			rep.addHook(hookRow{Target: name, Skipped: skip.reason})
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("start %s: %w", name, err)
	}
	err = measure(ctx, cfg, t, func(op string, res *result) error {
		record(t, op, res)
		if after == nil {
			return nil
		}
		return after(t, op)
	})
	if err == nil && hooks {
		fmt.Fprintf(stderr, "bench: measuring %s webhooks\n", name)
		if name == "bare" {
			err = measureBareHooks(ctx, cfg, rep)
		} else {
			err = measureHooks(ctx, cfg, t, rep)
		}
	}
	if cerr := t.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// profileRow starts the CPU profile and the execution trace of target's
// op row when -profile-row asks for them (profileFile), and returns what
// stops them.
func profileRow(cfg *config, target, op string) (stop func(), err error) {
	if cfg.profileRow != op {
		return func() {}, nil
	}
	var cpu, tr string
	if cfg.cpuProfile != "" {
		cpu = profileFile(cfg.cpuProfile, target, op)
	}
	if cfg.trace != "" {
		tr = profileFile(cfg.trace, target, op)
	}
	return startProfiles(cpu, tr)
}

// startProfiles starts a CPU profile into the file cpu and an execution
// trace into the file tr, each unless its name is empty, and returns what
// stops them and closes their files.
func startProfiles(cpu, tr string) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, s := range slices.Backward(stops) {
			s()
		}
	}
	start := func(name string, begin func(io.Writer) error, end func()) error {
		if name == "" {
			return nil
		}
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		if err := begin(f); err != nil {
			f.Close()
			return err
		}
		stops = append(stops, func() {
			end()
			f.Close()
		})
		return nil
	}
	if err := start(cpu, pprof.StartCPUProfile, pprof.StopCPUProfile); err != nil {
		return nil, err
	}
	if err := start(tr, trace.Start, trace.Stop); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// profileFile names the profile of one row: cpu.prof is cpu-sqlite-create.prof.
func profileFile(path, target, op string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + target + "-" + op + ext
}

// measure runs the create row of t, creates the pool of sessions, then runs
// the retrieve row (unless t measures creates only); it hands each row's
// result to record, and stops at record's error.
func measure(ctx context.Context, cfg *config, t *target, record func(op string, res *result) error) error {
	client := newClient(cfg.concurrency)
	defer client.CloseIdleConnections()
	lc := loadConfig{concurrency: cfg.concurrency, warmup: cfg.warmup, duration: cfg.duration}

	stop, err := profileRow(cfg, t.name, "create")
	if err != nil {
		return err
	}
	before := t.stats()
	res, err := createRow(ctx, client, lc, t)
	stop()
	if err != nil {
		return err
	}
	if after := t.stats(); after.Batches > before.Batches {
		res.batch = float64(after.Batched-before.Batched) / float64(after.Batches-before.Batches)
	}
	if err := record("create", res); err != nil {
		return err
	}
	if t.createOnly {
		return nil
	}

	ids, err := createPool(ctx, client, t, cfg.pool, cfg.concurrency)
	if err != nil {
		return fmt.Errorf("create the pool of sessions to retrieve: %w", err)
	}
	if stop, err = profileRow(cfg, t.name, "retrieve"); err != nil {
		return err
	}
	before = t.stats()
	res, err = retrieveRow(ctx, client, lc, t, ids)
	stop()
	if err != nil {
		return err
	}
	if after := t.stats(); after.ReadBatches > before.ReadBatches {
		res.batch = float64(after.ReadBatched-before.ReadBatched) / float64(after.ReadBatches-before.ReadBatches)
	}
	return record("retrieve", res)
}

// createRow runs a create row on t: the workers create sessions back to
// back.
func createRow(ctx context.Context, client *http.Client, lc loadConfig, t *target) (*result, error) {
	return runLoad(ctx, client, lc, func(int, int) (*http.Request, error) { return t.createRequest(ctx) })
}

// retrieveRow runs a retrieve row on t: the workers read the sessions of
// ids, each starting at another place in it and walking it round robin.
func retrieveRow(ctx context.Context, client *http.Client, lc loadConfig, t *target, ids []string) (*result, error) {
	return runLoad(ctx, client, lc, func(w, n int) (*http.Request, error) {
		return t.retrieveRequest(ctx, ids[(w*len(ids)/lc.concurrency+n)%len(ids)])
	})
}

// collectorNote describes the garbage collector's setting for the report:
// the operator's GOGC or GOMEMLIMIT, or the floor serve sets.
func collectorNote(getenv func(string) string) string {
	if gogc, limit := getenv("GOGC"), getenv("GOMEMLIMIT"); gogc != "" || limit != "" {
		return fmt.Sprintf("garbage collector as the environment sets it: GOGC=%q GOMEMLIMIT=%q", gogc, limit)
	}
	return fmt.Sprintf("garbage collector as serve sets it: a heap floor of %d MiB (internal/gcfloor)", gcfloor.DefaultFloor>>20)
}
