package metrics

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// This file holds the summarising code: pure functions from series to what
// the model reads. Nothing here does I/O, so it is tested with hand-built
// series and proved against a real Prometheus separately.

// Point is one sample of a series.
type Point struct {
	T time.Time
	V float64
}

// Series is one labelled series of a range query.
type Series struct {
	Labels map[string]string
	Points []Point
}

// Num is a sample value in a summary. JSON has no NaN or infinities, which
// Prometheus values may be; they are written as the strings "NaN", "+Inf"
// and "-Inf", and finite values are rounded to six significant digits,
// which is more than any decision needs and keeps the result small.
type Num float64

// MarshalJSON implements json.Marshaler.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"+Inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Inf"`), nil
	}
	return []byte(strconv.FormatFloat(f, 'g', 6, 64)), nil
}

// String is the value as the model reads it.
func (n Num) String() string {
	b, _ := n.MarshalJSON()
	return strings.Trim(string(b), `"`)
}

// Trend is a series' overall direction over the window, from a
// least-squares line through its samples.
type Trend struct {
	// Direction is rising, falling or flat: flat when the fitted line
	// moves less than a fifth of the series' own range.
	Direction string `json:"direction"`
	// Steady is set when the line explains the samples well (r² ≥ 0.9): a
	// steady climb rather than a jump.
	Steady bool `json:"steady"`
	// Change is how far the fitted line moves over the window.
	Change Num `json:"change"`
	// PerMinute is the fitted slope.
	PerMinute Num `json:"per_minute"`
	R2        Num `json:"r2"`
}

// Change is the largest sudden change of a series: a spike or dip (it went
// and came back) or a step (it stayed at the new level).
type Change struct {
	// Kind is spike, dip, step_up or step_down.
	Kind string `json:"kind"`
	// At is when it began: the first sample at the new level.
	At time.Time `json:"at"`
	// Until is the first sample back at the old level (spikes and dips).
	Until time.Time `json:"until,omitzero"`
	// From is the level before; To the level after a step, or the peak of
	// a spike (the trough of a dip).
	From Num `json:"from"`
	To   Num `json:"to"`
	// PeakAt is when a spike peaked or a dip bottomed out.
	PeakAt time.Time `json:"peak_at,omitzero"`
}

// SeriesSummary is what the model reads of one series.
type SeriesSummary struct {
	Series  string `json:"series"`
	Samples int    `json:"samples"`
	// NonFinite counts NaN and infinite samples, left out of the
	// statistics.
	NonFinite int       `json:"non_finite,omitempty"`
	First     Num       `json:"first"`
	Last      Num       `json:"last"`
	LastAt    time.Time `json:"last_at"`
	Min       Num       `json:"min"`
	MinAt     time.Time `json:"min_at"`
	Max       Num       `json:"max"`
	MaxAt     time.Time `json:"max_at"`
	Avg       Num       `json:"avg"`
	Trend     Trend     `json:"trend"`
	// LargestChange is the biggest sudden change; absent when the series
	// moved only gradually.
	LargestChange *Change `json:"largest_change,omitempty"`
}

// OrderByPeak is the order of series in a range summary.
const OrderByPeak = "max (peak value), highest first"

// OrderByValue is the order of series in an instant summary.
const OrderByValue = "value, highest first"

// RangeSummary summarises a range query.
type RangeSummary struct {
	Query string    `json:"query"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	Step  string    `json:"step"`
	// SeriesTotal is how many series the query returned; Series holds the
	// first Shown of them in OrderedBy order.
	SeriesTotal int             `json:"series_total"`
	Shown       int             `json:"shown"`
	Omitted     int             `json:"omitted"`
	OrderedBy   string          `json:"ordered_by"`
	Note        string          `json:"note,omitempty"`
	Series      []SeriesSummary `json:"series"`
}

// SummarizeRange summarises every series and keeps the limit with the
// highest peaks, saying how many were left out.
func SummarizeRange(query string, start, end time.Time, step time.Duration, series []Series, limit int) RangeSummary {
	sums := make([]SeriesSummary, 0, len(series))
	for _, s := range series {
		sums = append(sums, Summarize(s))
	}
	slices.SortStableFunc(sums, func(a, b SeriesSummary) int {
		if c := compareDesc(float64(a.Max), float64(b.Max)); c != 0 {
			return c
		}
		return cmp.Compare(a.Series, b.Series)
	})
	out := RangeSummary{
		Query: query, Start: start.UTC(), End: end.UTC(), Step: step.String(),
		SeriesTotal: len(sums), OrderedBy: OrderByPeak,
	}
	if len(sums) > limit {
		out.Omitted = len(sums) - limit
		out.Note = fmt.Sprintf("%d more series not shown (the %d with the highest peaks are); narrow the query or raise limit to see others", out.Omitted, limit)
		sums = sums[:limit]
	}
	if len(sums) == 0 {
		out.Note = "the query returned no series in this window"
	}
	out.Shown = len(sums)
	out.Series = sums
	return out
}

// compareDesc orders a before b when a is larger; NaN sorts last.
func compareDesc(a, b float64) int {
	switch an, bn := math.IsNaN(a), math.IsNaN(b); {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(b, a)
}

// Summarize computes one series' statistics, trend and largest change.
func Summarize(s Series) SeriesSummary {
	out := SeriesSummary{Series: FormatLabels(s.Labels), Samples: len(s.Points)}
	pts := make([]Point, 0, len(s.Points))
	for _, p := range s.Points {
		if math.IsNaN(p.V) || math.IsInf(p.V, 0) {
			out.NonFinite++
			continue
		}
		pts = append(pts, p)
	}
	if len(pts) == 0 {
		nan := Num(math.NaN())
		out.First, out.Last, out.Min, out.Max, out.Avg = nan, nan, nan, nan, nan
		out.Trend = Trend{Direction: "flat", Change: nan, PerMinute: nan, R2: nan}
		return out
	}
	sum := 0.0
	minI, maxI := 0, 0
	for i, p := range pts {
		sum += p.V
		if p.V < pts[minI].V {
			minI = i
		}
		if p.V > pts[maxI].V {
			maxI = i
		}
	}
	out.First = Num(pts[0].V)
	out.Last, out.LastAt = Num(pts[len(pts)-1].V), pts[len(pts)-1].T.UTC()
	out.Min, out.MinAt = Num(pts[minI].V), pts[minI].T.UTC()
	out.Max, out.MaxAt = Num(pts[maxI].V), pts[maxI].T.UTC()
	out.Avg = Num(sum / float64(len(pts)))
	out.Trend = trend(pts)
	out.LargestChange = largestChange(pts)
	return out
}

// trend fits a least-squares line through pts.
func trend(pts []Point) Trend {
	n := float64(len(pts))
	if len(pts) < 2 {
		return Trend{Direction: "flat", R2: 1}
	}
	t0 := pts[0].T
	var sx, sy float64
	for _, p := range pts {
		sx += p.T.Sub(t0).Seconds()
		sy += p.V
	}
	mx, my := sx/n, sy/n
	var sxx, sxy, syy float64
	lo, hi := pts[0].V, pts[0].V
	for _, p := range pts {
		dx, dy := p.T.Sub(t0).Seconds()-mx, p.V-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
		lo, hi = min(lo, p.V), max(hi, p.V)
	}
	if sxx == 0 || syy == 0 {
		return Trend{Direction: "flat", R2: 1}
	}
	slope := sxy / sxx
	r2 := sxy * sxy / (sxx * syy)
	span := pts[len(pts)-1].T.Sub(t0).Seconds()
	change := slope * span
	t := Trend{Change: Num(change), PerMinute: Num(slope * 60), R2: Num(math.Round(r2*1000) / 1000), Steady: r2 >= 0.9}
	switch {
	case math.Abs(change) < 0.2*(hi-lo):
		t.Direction, t.Steady = "flat", false
	case change > 0:
		t.Direction = "rising"
	default:
		t.Direction = "falling"
	}
	return t
}

// largestChange finds the biggest jump between consecutive samples and
// says whether it was a spike (up and back), a dip (down and back) or a
// step. A jump counts only when it stands out: at least five times the
// typical (median) jump and a quarter of the series' range, so a steady
// climb, whose jumps are all alike, has none.
func largestChange(pts []Point) *Change {
	if len(pts) < 3 {
		return nil
	}
	deltas := make([]float64, len(pts)-1)
	lo, hi := pts[0].V, pts[0].V
	best := 1
	for i := 1; i < len(pts); i++ {
		deltas[i-1] = math.Abs(pts[i].V - pts[i-1].V)
		if deltas[i-1] > deltas[best-1] {
			best = i
		}
		lo, hi = min(lo, pts[i].V), max(hi, pts[i].V)
	}
	d := pts[best].V - pts[best-1].V
	sorted := slices.Clone(deltas)
	sort.Float64s(sorted)
	typical := sorted[len(sorted)/2]
	if math.Abs(d) == 0 || math.Abs(d) < 5*typical || math.Abs(d) < 0.25*(hi-lo) {
		return nil
	}
	window := max(3, len(pts)/10)
	near := func(a, b float64) bool { return math.Abs(a-b) <= 0.2*math.Abs(d) }
	before, after := pts[best-1], pts[best]
	// Went and came back: the excursion starts at the jump and ends at the
	// first sample near the old level again.
	for j := best + 1; j <= min(best+window, len(pts)-1); j++ {
		if near(pts[j].V, before.V) {
			return excursion(pts, best, j-1, before.V, pts[j].T)
		}
	}
	// The jump may be the way back: look for the level it returned to just
	// before it.
	for k := best - 2; k >= max(0, best-1-window); k-- {
		if near(pts[k].V, after.V) {
			return excursion(pts, k+1, best-1, pts[k].V, after.T)
		}
	}
	c := &Change{At: after.T.UTC(), From: Num(before.V), To: Num(after.V), Kind: "step_up"}
	if d < 0 {
		c.Kind = "step_down"
	}
	return c
}

// excursion describes samples first..last, away from base and back at
// until, as a spike or a dip with its extreme.
func excursion(pts []Point, first, last int, base float64, until time.Time) *Change {
	ext := first
	above := pts[first].V > base
	for i := first; i <= last; i++ {
		if (above && pts[i].V > pts[ext].V) || (!above && pts[i].V < pts[ext].V) {
			ext = i
		}
	}
	c := &Change{Kind: "spike", At: pts[first].T.UTC(), Until: until.UTC(), From: Num(base), To: Num(pts[ext].V), PeakAt: pts[ext].T.UTC()}
	if !above {
		c.Kind = "dip"
	}
	return c
}

// FormatLabels writes a label set as PromQL does: name{a="1", b="2"}, the
// other labels sorted.
func FormatLabels(ls map[string]string) string {
	keys := make([]string, 0, len(ls))
	for k := range ls {
		if k != "__name__" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(ls["__name__"])
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k + "=" + strconv.Quote(ls[k]))
	}
	b.WriteByte('}')
	return b.String()
}

// Sample is one series' value in an instant summary.
type Sample struct {
	Series string    `json:"series"`
	Value  Num       `json:"value"`
	At     time.Time `json:"at"`
}

// InstantSummary summarises an instant query's vector.
type InstantSummary struct {
	Query       string    `json:"query"`
	At          time.Time `json:"at"`
	ResultType  string    `json:"result_type"`
	SeriesTotal int       `json:"series_total"`
	Shown       int       `json:"shown"`
	Omitted     int       `json:"omitted"`
	OrderedBy   string    `json:"ordered_by,omitempty"`
	Note        string    `json:"note,omitempty"`
	Samples     []Sample  `json:"samples"`
}

// SummarizeInstant keeps the limit highest samples of a vector, saying how
// many were left out.
func SummarizeInstant(query string, at time.Time, samples []Sample, limit int) InstantSummary {
	samples = slices.Clone(samples)
	slices.SortStableFunc(samples, func(a, b Sample) int {
		if c := compareDesc(float64(a.Value), float64(b.Value)); c != 0 {
			return c
		}
		return cmp.Compare(a.Series, b.Series)
	})
	out := InstantSummary{Query: query, At: at.UTC(), ResultType: "vector", SeriesTotal: len(samples), OrderedBy: OrderByValue}
	if len(samples) > limit {
		out.Omitted = len(samples) - limit
		out.Note = fmt.Sprintf("%d more series not shown (the %d highest are); narrow the query, use topk, or raise limit", out.Omitted, limit)
		samples = samples[:limit]
	}
	if len(samples) == 0 {
		out.Note = "the query returned no series"
	}
	out.Shown = len(samples)
	out.Samples = samples
	return out
}

// keepSorted returns the first limit of the sorted values and how many
// were left out.
func keepSorted[T cmp.Ordered](vs []T, limit int) ([]T, int) {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	if len(vs) > limit {
		return vs[:limit], len(vs) - limit
	}
	return vs, 0
}

var _ json.Marshaler = Num(0)
