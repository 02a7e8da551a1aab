//! Max-min fair rates by progressive filling: every flow's rate grows at the same pace until
//! a resource it uses is full; its flows then keep that rate, and the others go on.
//!
//! A flow uses each of its resources with a weight (bytes of the resource per byte of the
//! flow: a link carries headers, a DMA engine moves only the payload).
//!
//! A solve starts from the flows that the resources changed since the last one held back
//! (and new flows), and widens only as far as rates must move (see `solve`): a change in a
//! network whose flows all share links end to end moves the rates of a few dozen flows,
//! not of all of them.

use smallvec::SmallVec;

/// Relative margin within which a resource counts as full (sums of rates round).
const FIT: f64 = 1e-9;
/// Weight below which a resource has no open flow left (subtractions round).
const OPEN: f64 = 1e-12;
/// No leaf in the tournament: the resource is not open.
const NO_LEAF: u32 = u32::MAX;
/// Open resources from which a solve keeps them in a tournament rather than scanning them
/// every round.
const TOURNAMENT_FROM: usize = 4096;
/// No resource.
const NONE: u32 = u32::MAX;
/// Marks a changed resource a new flow did not fit in.
const ADDED: u32 = 1 << 31;
/// A solve whose rounds have solved more than this many times its flows solves their whole
/// connected component next.
const WHOLE_AFTER: usize = 8;
/// An empty leaf of the tournament.
const EMPTY: u128 = (f64::INFINITY.to_bits() as u128) << 32 | u32::MAX as u128;

/// Resources a flow keeps in place: a route of up to four links and two DMA engines.
const INLINE_USES: usize = 6;

#[derive(Debug, Clone, Default)]
struct Resource {
    capacity: f64,
    /// What its flows carry (weight × rate, summed).
    load: f64,
    /// Active flows using it, and each one's weight on it (most resources carry one flow
    /// at a time: it is kept in place, not on the heap; a million-node run has ten million
    /// resources).
    flows: SmallVec<[(u32, f64); 1]>,
    /// Round of a solve in which it was last reached (so a round visits it once), and
    /// then its place in that round's `component` and `scratch` (what a solve needs of a resource
    /// is kept there, not here: 48 bytes a resource instead of 80).
    seen: u32,
    slot: u32,
}

/// What a solve keeps of each resource of its component: the load of the flows already
/// fixed, the weight of the others, and its leaf in the tournament (`NO_LEAF`: none).
#[derive(Debug, Clone, Copy)]
struct Scratch {
    fixed_load: f64,
    open_weight: f64,
    leaf: u32,
}

/// A resource a flow uses: its weight there, and where the flow stands in the resource's
/// flow list (for removal). 16 bytes, as a (resource, weight) pair is with its padding.
#[derive(Debug, Clone, Copy)]
struct Use {
    resource: u32,
    slot: u32,
    weight: f64,
}

/// A flow's resources (kept in place up to `INLINE_USES`: a message's route and its two
/// DMA engines, so that most flows allocate nothing). Apart from `Flow`: a solve reads the
/// rates and marks of many more flows than it reads the routes of.
type Route = SmallVec<[Use; INLINE_USES]>;

/// What a solve reads and writes of a flow, 24 bytes: the flows of a solve's resources fit
/// in the core's cache where their routes would not. (The rate its resources of its own
/// allow, in a solve, is kept in the solve's `by_cap`.)
#[derive(Debug, Clone, Default)]
struct Flow {
    rate: f64,
    active: bool,
    seen: u32,
    fixed: bool,
    /// The resource that set its rate (`NONE` before a solve): where a later solve checks
    /// first that it still holds the flow back.
    bottleneck: u32,
    /// Outside a solve: the round (`MaxMin::visit`) whose resources included its
    /// bottleneck (so that widening need not look the resource up).
    reached: u32,
}

/// Resources, flows and their max-min rates.
#[derive(Debug, Default)]
pub struct MaxMin {
    resources: Vec<Resource>,
    flows: Vec<Flow>,
    routes: Vec<Route>,
    free_flows: Vec<u32>,
    /// Resources changed since the last solve, with `ADDED` on those a new flow did not fit
    /// in (a resource may be listed twice: the solve visits it once, as it is first listed).
    dirty: Vec<u32>,
    solve: u32,
    /// Stamp of the last visit of resources (one a round of a solve).
    visit: u32,
    /// Tests: rounds of solves so far.
    #[cfg(test)]
    rounds: usize,
    /// Scratch lists of a solve: its resources, and what it keeps of each.
    component: Vec<u32>,
    scratch: Vec<Scratch>,
    stack: Vec<u32>,
    /// The flows of a solve that a resource of their own caps, as `ranked(cap, flow)`.
    by_cap: Vec<u128>,
    /// The open shared resources of a solve, as `ranked(fill rate, resource)`, in a
    /// tournament (a binary tree whose every node holds the lower of its children): the one
    /// that fills first is at the root. Leaves from `tree.len() / 2`.
    tree: Vec<u128>,
    /// Whether `tree` is a tournament (else a flat list of the open resources).
    tournament: bool,
    /// Tests: every solve uses the tournament.
    #[cfg(test)]
    always_tournament: bool,
}

impl MaxMin {
    /// A resource of `capacity` (bytes per picosecond).
    pub fn add_resource(&mut self, capacity: f64) -> u32 {
        // Ids stay below `ADDED`, the mark of a changed resource (a machine of that many
        // links would need hundreds of gigabytes).
        debug_assert!(self.resources.len() < ADDED as usize, "too many resources");
        self.resources.push(Resource {
            capacity,
            ..Default::default()
        });
        crate::prefault::grew(&self.resources);
        (self.resources.len() - 1) as u32
    }

    pub fn capacity(&self, r: u32) -> f64 {
        self.resources[r as usize].capacity
    }

    /// The rate of a flow using `uses` (resource, weight) alone: its smallest
    /// capacity / weight. A solve gives a lone flow exactly this.
    pub fn alone(&self, uses: &[(u32, f64)]) -> f64 {
        self.tightest(uses).0
    }

    /// That rate and the resource that sets it (the first of the lowest; `NONE` when the
    /// flow loads nothing).
    fn tightest(&self, uses: &[(u32, f64)]) -> (f64, u32) {
        let mut best = (f64::INFINITY, NONE);
        for &(r, w) in uses.iter().filter(|(_, w)| *w > 0.0) {
            let rate = self.resources[r as usize].capacity / w;
            if rate < best.0 {
                best = (rate, r);
            }
        }
        best
    }

    /// Starts a flow on `uses`. When it fits alone in what every resource it uses has
    /// left, it gets that rate at once and nothing else changes (no resource of its was
    /// anyone's bottleneck); else its rate (`0` until then) and the others' are set by the
    /// next `solve`.
    pub fn add_flow(&mut self, uses: &[(u32, f64)]) -> u32 {
        self.add_flow_alone(uses).0
    }

    /// `add_flow`, and the rate the flow would have alone (`alone`), worked out once.
    pub fn add_flow_alone(&mut self, uses: &[(u32, f64)]) -> (u32, f64) {
        let id = match self.free_flows.pop() {
            Some(id) => id,
            None => {
                self.flows.push(Flow::default());
                self.routes.push(Route::new());
                crate::prefault::grew(&self.flows);
                crate::prefault::grew(&self.routes);
                (self.flows.len() - 1) as u32
            }
        };
        // Alone, its tightest resource holds it back (a solve sets it otherwise).
        let (alone, tightest) = self.tightest(uses);
        // A resource nobody uses yet takes it whole; one in use must keep a margin.
        let fits_in = |res: &Resource, w: f64| {
            let margin = if res.flows.is_empty() { -FIT } else { FIT };
            res.capacity - res.load >= w * alone * (1.0 + margin)
        };
        let fits = uses
            .iter()
            .all(|&(r, w)| fits_in(&self.resources[r as usize], w));
        // The slot's route of its last flow is reused in place (a run starts millions of
        // flows).
        let route = &mut self.routes[id as usize];
        route.clear();
        for &(r, w) in uses {
            let res = &mut self.resources[r as usize];
            let room = fits_in(res, w);
            route.push(Use {
                resource: r,
                slot: res.flows.len() as u32,
                weight: w,
            });
            res.flows.push((id, w));
            if fits {
                res.load += w * alone;
            } else if !room {
                self.dirty.push(r | ADDED);
            }
        }
        let f = &mut self.flows[id as usize];
        f.rate = if fits { alone } else { 0.0 };
        f.active = true;
        f.bottleneck = tightest;
        (id, alone)
    }

    /// Ends a flow. Only the flows on a resource it filled may speed up (at the next
    /// `solve`): elsewhere nobody was held back.
    pub fn remove_flow(&mut self, id: u32) {
        let rate = self.flows[id as usize].rate;
        let mut route = std::mem::take(&mut self.routes[id as usize]);
        for u in &route {
            let (r, slot) = (u.resource, u.slot as usize);
            let res = &mut self.resources[r as usize];
            let full = res.load >= res.capacity * (1.0 - FIT);
            res.load = (res.load - u.weight * rate).max(0.0);
            res.flows.swap_remove(slot);
            if let Some(&(moved, _)) = res.flows.get(slot) {
                // The flow moved into `slot` keeps its index right.
                let m = &mut self.routes[moved as usize];
                if let Some(k) = m.iter_mut().find(|k| k.resource == r) {
                    k.slot = slot as u32;
                }
            }
            if full && !self.resources[r as usize].flows.is_empty() {
                self.mark(r);
            }
        }
        // The slot keeps its route's memory for the next flow.
        route.clear();
        self.routes[id as usize] = route;
        self.flows[id as usize] = Flow::default();
        self.free_flows.push(id);
    }

    fn mark(&mut self, r: u32) {
        self.dirty.push(r);
    }

    /// Active flows on resource `r`.
    pub fn flows_on(&self, r: u32) -> usize {
        self.resources[r as usize].flows.len()
    }

    pub fn rate(&self, id: u32) -> f64 {
        self.flows[id as usize].rate
    }

    /// The resources of flow `id` and its weight on each.
    pub fn uses(&self, id: u32) -> impl Iterator<Item = (u32, f64)> + '_ {
        self.routes[id as usize]
            .iter()
            .map(|u| (u.resource, u.weight))
    }

    /// Whether anything changed since the last solve.
    pub fn is_dirty(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// Solves again the flows the changes reach; `changed` gets the flows whose rate was
    /// (re)computed, in a deterministic order.
    ///
    /// Max-min rates are unique: every flow has a bottleneck, a full resource on which no
    /// flow is faster. So rather than the whole connected component, a solve starts from the
    /// flows the changed resources held back and new flows (`seed`), fills them with every
    /// other flow's load held fixed, and then checks the flows around them: a flow that
    /// lost its bottleneck, or that a solved flow needs slower, joins the solve, which runs
    /// again. It stops when every flow it touches has a bottleneck: the rates are then the
    /// max-min rates, and flows farther away keep theirs.
    pub fn solve(&mut self, changed: &mut Vec<u32>) {
        changed.clear();
        self.solve = self.solve.wrapping_add(1);
        self.seed(changed);
        let mut work = 0;
        loop {
            #[cfg(test)]
            {
                self.rounds += 1;
            }
            work += changed.len();
            self.collect(changed);
            self.fill();
            if !self.widen(changed) {
                break;
            }
            // A change that moves rates along a long chain would widen by a few flows a
            // round, each round solving them all again: past a few rounds' worth of work,
            // the whole connected component is solved at once (as a solve from scratch).
            if work > WHOLE_AFTER * changed.len() {
                self.close_component(changed);
            }
        }
    }

    /// The flows on the changed resources that may move: those a changed resource held back
    /// (their bottleneck), new ones (rate 0), and on a resource a new flow did not fit in
    /// (`ADDED`) those faster than its even share, which the new flow will likely slow;
    /// each once, in the order the resources changed, into `flows`, marked as this solve's.
    /// Another flow held back elsewhere keeps its bottleneck and its rate unless the solve's
    /// flows need it slower, which `widen` finds: starting from every flow on the changed
    /// resources took 33 % more instructions a change (`benches/maxmin.rs`), for the same
    /// rates.
    #[inline(never)]
    fn seed(&mut self, flows: &mut Vec<u32>) {
        self.visit = self.visit.wrapping_add(1);
        let visit = self.visit;
        for i in 0..self.dirty.len() {
            let (r, added) = (self.dirty[i] & !ADDED, self.dirty[i] & ADDED != 0);
            let res = &self.resources[r as usize];
            let share = res.capacity / res.flows.len() as f64;
            self.join_flows_on(r, visit, flows, |flow, w| {
                flow.bottleneck == r || flow.rate == 0.0 || (added && w * flow.rate > share)
            });
        }
        self.dirty.clear();
    }

    /// The flows on resource `r` that `may_move` (given a flow and its weight there) join
    /// `flows` (each once a solve), unless `r` was visited already (`visit`).
    #[inline(always)]
    fn join_flows_on(
        &mut self,
        r: u32,
        visit: u32,
        flows: &mut Vec<u32>,
        may_move: impl Fn(&Flow, f64) -> bool,
    ) {
        let res = &mut self.resources[r as usize];
        if res.seen == visit {
            return;
        }
        res.seen = visit;
        for &(f, w) in &res.flows {
            let flow = &mut self.flows[f as usize];
            if flow.seen != self.solve && may_move(flow, w) {
                flow.seen = self.solve;
                flows.push(f);
            }
        }
    }

    /// Every active flow connected to `flows` through shared resources joins them.
    #[inline(never)]
    fn close_component(&mut self, flows: &mut Vec<u32>) {
        self.visit = self.visit.wrapping_add(1);
        let visit = self.visit;
        let mut i = 0;
        while i < flows.len() {
            let f = flows[i] as usize;
            i += 1;
            for k in 0..self.routes[f].len() {
                let r = self.routes[f][k].resource;
                if self.resources[r as usize].flows.len() > 1 {
                    self.join_flows_on(r, visit, flows, |_, _| true);
                }
            }
        }
    }

    /// The shared resources of `flows` (the component of this round of the solve), each
    /// with the load of the flows outside the solve (held fixed) and the weight of those
    /// in it; each flow's cap (its resources no other flow uses).
    #[inline(never)]
    fn collect(&mut self, flows: &[u32]) {
        self.component.clear();
        self.scratch.clear();
        self.by_cap.clear();
        self.visit = self.visit.wrapping_add(1);
        let visit = self.visit;
        for &f in flows {
            let (mut cap, mut cap_at) = (f64::INFINITY, NONE);
            for u in &self.routes[f as usize] {
                let (r, w) = (u.resource, u.weight);
                let res = &mut self.resources[r as usize];
                if res.flows.len() > 1 {
                    if res.seen != visit {
                        res.seen = visit;
                        res.slot = self.component.len() as u32;
                        self.component.push(r);
                        self.scratch.push(Scratch {
                            fixed_load: 0.0,
                            open_weight: 0.0,
                            leaf: NO_LEAF,
                        });
                    }
                    self.scratch[res.slot as usize].open_weight += w;
                } else if w > 0.0 && res.capacity / w < cap {
                    // A resource of this flow alone caps it.
                    (cap, cap_at) = (res.capacity / w, r);
                }
            }
            let flow = &mut self.flows[f as usize];
            (flow.fixed, flow.rate) = (false, 0.0);
            // Fixed at its cap, its own resource holds it back; `fill_resource` says
            // otherwise.
            flow.bottleneck = cap_at;
            if cap.is_finite() {
                self.by_cap.push(ranked(cap, f));
            }
        }
        let solve = self.solve;
        for (&r, sc) in self.component.iter().zip(self.scratch.iter_mut()) {
            for &(g, w) in &self.resources[r as usize].flows {
                let flow = &mut self.flows[g as usize];
                if flow.seen != solve {
                    sc.fixed_load += w * flow.rate;
                    if flow.bottleneck == r {
                        flow.reached = visit;
                    }
                }
            }
        }
    }

    /// After a fill: the flows outside the solve on its resources that lost their
    /// bottleneck, and those faster than a solved flow on the resource that holds it back,
    /// join `flows`; `false` when none does (the rates are max-min).
    #[inline(never)]
    fn widen(&mut self, flows: &mut Vec<u32>) -> bool {
        let (solve, visit) = (self.solve, self.visit);
        let before = flows.len();
        // The lists are borrowed apart, so the loops index nothing twice.
        let (resources, routes, all) = (&self.resources, &self.routes, &mut self.flows);
        for &r in &self.component {
            for &(g, _) in &resources[r as usize].flows {
                let flow = &all[g as usize];
                // A bottleneck outside the round is as it was: it still holds.
                if flow.seen == solve
                    || (flow.bottleneck != NONE && flow.reached != visit)
                    || bottlenecked(resources, routes, all, g)
                {
                    continue;
                }
                all[g as usize].seen = solve;
                flows.push(g);
            }
        }
        for i in 0..before {
            let f = flows[i];
            if bottlenecked(resources, routes, all, f) {
                continue;
            }
            // The faster flows outside the solve on its full resources hold it back.
            let rate = all[f as usize].rate;
            for u in &routes[f as usize] {
                let r = u.resource;
                let res = &resources[r as usize];
                if !full(res) {
                    continue;
                }
                for &(g, _) in &res.flows {
                    let flow = &mut all[g as usize];
                    if flow.seen != solve && flow.rate > rate * (1.0 + FIT) {
                        flow.seen = solve;
                        flows.push(g);
                    }
                }
            }
        }
        flows.len() > before
    }

    /// Progressive filling of `flows` over the component's resources: round after round,
    /// what fills first fixes its flows at that rate: a shared resource (its open flows at
    /// the lowest common rate; ties to the lowest id, so solving is deterministic) or a
    /// flow's own cap (the resources only it uses). The shared resources still open are
    /// kept in a tournament: fixing a flow updates its resources' leaves and their paths
    /// to the root, and the root is the next to fill.
    #[inline(never)]
    fn fill(&mut self) {
        let mut by_cap = std::mem::take(&mut self.by_cap);
        // By cap, then flow id: the keys sort as the pairs do, without reading the flows.
        by_cap.sort_unstable();
        // The shared resources with open flows, as leaves.
        let mut open = std::mem::take(&mut self.stack);
        open.clear();
        for (&r, sc) in self.component.iter().zip(&self.scratch) {
            if self.resources[r as usize].flows.len() > 1 && sc.open_weight > OPEN {
                open.push(r);
            }
        }
        #[cfg(test)]
        let tournament = open.len() >= TOURNAMENT_FROM || self.always_tournament;
        #[cfg(not(test))]
        let tournament = open.len() >= TOURNAMENT_FROM;
        if tournament {
            self.fill_by_tournament(&open, &by_cap);
        } else {
            self.fill_by_scan(&open, &by_cap);
        }
        self.stack = open;
        self.by_cap = by_cap;
        for (&r, sc) in self.component.iter().zip(&self.scratch) {
            let res = &mut self.resources[r as usize];
            if res.flows.len() > 1 {
                res.load = sc.fixed_load;
            }
        }
    }

    /// The rounds of `fill`, a scan of the open resources' fill rates each (kept in a flat
    /// list, `tree`, as fixing flows changes them).
    fn fill_by_scan(&mut self, open: &[u32], by_cap: &[u128]) {
        let mut rates = std::mem::take(&mut self.tree);
        rates.clear();
        for (i, &r) in open.iter().enumerate() {
            let sc = &mut self.scratch[self.resources[r as usize].slot as usize];
            sc.leaf = i as u32;
            rates.push(ranked(
                fill_rate(self.resources[r as usize].capacity, sc),
                r,
            ));
        }
        self.tree = rates;
        self.tournament = false;
        let mut next_cap = 0;
        loop {
            // The lowest (rate, resource), found without branching on each entry.
            let best = self.tree.iter().copied().min().map(unranked);
            if !self.round(best, by_cap, &mut next_cap) {
                break;
            }
        }
    }

    /// The rounds of `fill`, the open resources in a tournament.
    fn fill_by_tournament(&mut self, open: &[u32], by_cap: &[u128]) {
        let leaves = open.len().next_power_of_two();
        let mut tree = std::mem::take(&mut self.tree);
        tree.clear();
        tree.resize(2 * leaves, EMPTY);
        for (i, &r) in open.iter().enumerate() {
            let sc = &mut self.scratch[self.resources[r as usize].slot as usize];
            sc.leaf = (leaves + i) as u32;
            tree[leaves + i] = ranked(fill_rate(self.resources[r as usize].capacity, sc), r);
        }
        for i in (1..leaves).rev() {
            tree[i] = tree[2 * i].min(tree[2 * i + 1]);
        }
        self.tree = tree;
        self.tournament = true;
        let mut next_cap = 0;
        loop {
            let best = Some(self.tree[1]).filter(|&k| k != EMPTY).map(unranked);
            if !self.round(best, by_cap, &mut next_cap) {
                break;
            }
        }
    }

    /// One round of `fill`: the shared resource that fills first (`best`) or the lowest cap
    /// of an open flow (from `by_cap[*next_cap..]`), whichever is lower, fixes its flows;
    /// `false` when nothing is open.
    fn round(&mut self, best: Option<(f64, u32)>, by_cap: &[u128], next_cap: &mut usize) -> bool {
        while *next_cap < by_cap.len() && self.flows[by_cap[*next_cap] as u32 as usize].fixed {
            *next_cap += 1;
        }
        let cap = by_cap.get(*next_cap).map(|&key| unranked(key));
        match (best, cap) {
            (None, None) => return false,
            (Some((rate, r)), None) => self.fill_resource(r, rate),
            (Some((rate, r)), Some((c, _))) if rate < c => self.fill_resource(r, rate),
            (_, Some((c, f))) => self.fix(f, c),
        }
        true
    }

    /// Shared resource `r` is full at `rate`: every open flow on it keeps that rate (it is
    /// their bottleneck).
    fn fill_resource(&mut self, r: u32, rate: f64) {
        for i in 0..self.resources[r as usize].flows.len() {
            let (f, _) = self.resources[r as usize].flows[i];
            let flow = &self.flows[f as usize];
            // Flows outside the solve keep their rates.
            if flow.seen == self.solve && !flow.fixed {
                self.flows[f as usize].bottleneck = r;
                self.fix(f, rate);
            }
        }
        let sc = &mut self.scratch[self.resources[r as usize].slot as usize];
        sc.open_weight = 0.0;
        let leaf = std::mem::replace(&mut sc.leaf, NO_LEAF);
        if leaf != NO_LEAF {
            update(
                (&mut self.tree, self.tournament),
                (&self.resources, &mut self.scratch),
                leaf,
                EMPTY,
            );
        }
    }

    /// Flow `f` keeps `rate`: its resources carry it, and fill later for the others.
    fn fix(&mut self, f: u32, rate: f64) {
        let flow = &mut self.flows[f as usize];
        flow.fixed = true;
        flow.rate = rate;
        for u in &self.routes[f as usize] {
            let (r, w) = (u.resource, u.weight);
            let res = &mut self.resources[r as usize];
            if res.flows.len() == 1 {
                res.load = w * rate;
                continue;
            }
            let capacity = res.capacity;
            let sc = &mut self.scratch[res.slot as usize];
            sc.fixed_load += w * rate;
            sc.open_weight -= w;
            // Rounding may leave a sliver of weight: below this, nothing is open.
            if sc.open_weight <= OPEN {
                sc.open_weight = 0.0;
            }
            if sc.leaf != NO_LEAF {
                let leaf = sc.leaf;
                let entry = if sc.open_weight > OPEN {
                    ranked(fill_rate(capacity, sc), r)
                } else {
                    sc.leaf = NO_LEAF;
                    EMPTY
                };
                update(
                    (&mut self.tree, self.tournament),
                    (&self.resources, &mut self.scratch),
                    leaf,
                    entry,
                );
            }
        }
    }

    /// The load on every resource over its capacity, beyond rounding: the first resource
    /// that carries more than it can, if any (checks).
    pub fn overloaded(&self) -> Option<(u32, f64, f64)> {
        self.resources.iter().enumerate().find_map(|(r, res)| {
            let load: f64 = res
                .flows
                .iter()
                .map(|&(f, w)| w * self.flows[f as usize].rate)
                .sum();
            (load > res.capacity * (1.0 + 1e-9)).then_some((r as u32, load, res.capacity))
        })
    }

    /// A flow without a bottleneck: no resource of its is full with no faster flow on it
    /// (within `1e-9`). Max-min rates give every flow one.
    pub fn unbottlenecked(&self) -> Option<u32> {
        self.flows.iter().enumerate().find_map(|(f, flow)| {
            if !flow.active || self.uses(f as u32).all(|(_, w)| w <= 0.0) {
                return None;
            }
            let most = flow.rate * (1.0 + 1e-9);
            let limited = self.uses(f as u32).any(|(r, w)| {
                let res = &self.resources[r as usize];
                let load: f64 = res
                    .flows
                    .iter()
                    .map(|&(g, w2)| w2 * self.flows[g as usize].rate)
                    .sum();
                w > 0.0
                    && load >= res.capacity * (1.0 - 1e-9)
                    && res
                        .flows
                        .iter()
                        .all(|&(g, _)| self.flows[g as usize].rate <= most)
            });
            (!limited).then_some(f as u32)
        })
    }
}

#[inline(always)]
/// Leaf `leaf` of the tournament `tree` now holds `entry`: its path to the root follows
/// (in a flat list, the entry is replaced, or removed when `EMPTY`, the resource moved
/// into its place noting its new leaf in `scratch`).
fn update(
    (tree, tournament): (&mut Vec<u128>, bool),
    (resources, scratch): (&[Resource], &mut [Scratch]),
    leaf: u32,
    entry: u128,
) {
    let mut i = leaf as usize;
    if !tournament {
        if entry != EMPTY {
            tree[i] = entry;
        } else {
            // Closed: out of the list (the last one takes its place).
            tree.swap_remove(i);
            if let Some(&moved) = tree.get(i) {
                let moved = moved as u32;
                scratch[resources[moved as usize].slot as usize].leaf = i as u32;
            }
        }
        return;
    }
    tree[i] = entry;
    while i > 1 {
        let parent = i / 2;
        let low = tree[2 * parent].min(tree[2 * parent + 1]);
        if tree[parent] == low {
            break;
        }
        tree[parent] = low;
        i = parent;
    }
}

/// Whether resource `res` is full (within rounding).
#[inline]
fn full(res: &Resource) -> bool {
    res.load >= res.capacity * (1.0 - FIT)
}

/// Whether flow `f` has a bottleneck: a full resource it uses on which no flow is faster
/// (within rounding). The one it had is tried first; another one found is kept.
#[inline(always)]
fn bottlenecked(resources: &[Resource], routes: &[Route], flows: &mut [Flow], f: u32) -> bool {
    let flow = &flows[f as usize];
    if flow.bottleneck != NONE && holds_back(resources, flows, f, flow.bottleneck) {
        return true;
    }
    let route = &routes[f as usize];
    // A flow that loads nothing has nothing to solve.
    if route.iter().all(|u| u.weight <= 0.0) {
        return true;
    }
    let found = route
        .iter()
        .find(|u| u.weight > 0.0 && holds_back(resources, flows, f, u.resource));
    match found {
        Some(u) => {
            flows[f as usize].bottleneck = u.resource;
            true
        }
        None => false,
    }
}

/// Whether resource `r` is full and no flow on it is faster than flow `f`.
fn holds_back(resources: &[Resource], flows: &[Flow], f: u32, r: u32) -> bool {
    let most = flows[f as usize].rate * (1.0 + FIT);
    let res = &resources[r as usize];
    full(res)
        && res
            .flows
            .iter()
            .all(|&(g, _)| flows[g as usize].rate <= most)
}

/// The rate at which a shared resource of `capacity` fills with its open flows.
fn fill_rate(capacity: f64, sc: &Scratch) -> f64 {
    (capacity - sc.fixed_load).max(0.0) / sc.open_weight
}

/// A (rate, id) pair as one number that orders as the pairs do: the lower rate first,
/// then the lower id (so that solving is deterministic). The bits of floats with a clear sign bit order as the floats do, and a rate's sign
/// bit is clear: rates are not negative, and none is -0 (a fill rate is
/// `(capacity - load).max(0.0) / weight`, a cap `capacity / weight`, every term positive or
/// +0). Normalising a -0 here (adding +0) cost 4 % of the flow all-to-all's instructions.
#[inline(always)]
fn ranked(rate: f64, id: u32) -> u128 {
    debug_assert!(rate.is_sign_positive(), "rate {rate} ranks out of order");
    u128::from(rate.to_bits()) << 32 | u128::from(id)
}

/// The (rate, id) pair of `ranked`.
#[inline(always)]
fn unranked(key: u128) -> (f64, u32) {
    (f64::from_bits((key >> 32) as u64), key as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_flow_is_24_bytes() {
        assert_eq!(std::mem::size_of::<Flow>(), 24);
    }

    /// Ranked pairs order as the pairs do: by rate, then by id.
    #[test]
    fn ranked_pairs_order_by_rate_then_id() {
        let pairs = [
            (0.0, 3),
            (0.0, 2),
            (5e-324, 0),
            (1e-300, 0),
            (0.5, 1),
            (0.5, 0),
            (f64::INFINITY, 0),
        ];
        for &a in &pairs {
            for &b in &pairs {
                let by_pairs = a.0 < b.0 || (a.0 == b.0 && a.1 <= b.1);
                assert_eq!(
                    ranked(a.0, a.1) <= ranked(b.0, b.1),
                    by_pairs,
                    "{a:?} {b:?}"
                );
            }
        }
        assert_eq!(unranked(ranked(0.25, 7)), (0.25, 7));
    }

    #[test]
    fn two_flows_share_a_link_and_a_third_gets_the_rest_elsewhere() {
        let mut m = MaxMin::default();
        let a = m.add_resource(10.0);
        let b = m.add_resource(4.0);
        let f1 = m.add_flow(&[(a, 1.0), (b, 1.0)]);
        let f2 = m.add_flow(&[(b, 1.0)]);
        let f3 = m.add_flow(&[(a, 1.0)]);
        let mut changed = Vec::new();
        m.solve(&mut changed);
        changed.sort_unstable();
        assert_eq!(changed, vec![f1, f2, f3]);
        assert_eq!((m.rate(f1), m.rate(f2), m.rate(f3)), (2.0, 2.0, 8.0));
        m.remove_flow(f2);
        m.solve(&mut changed);
        assert_eq!((m.rate(f1), m.rate(f3)), (4.0, 6.0));
    }

    /// The solve starts from the new flow and g (held back by link b, not by r, but faster
    /// than r's even share, which the new flow may take), and widening brings in h, whose
    /// link g leaves room on. Max-min by hand: r = 10 split 5/5 between f and g, and h
    /// takes b's 16 less g's 5.
    #[test]
    fn a_flow_held_back_elsewhere_slows_when_a_new_flow_fills_its_link() {
        let mut m = MaxMin::default();
        let r = m.add_resource(10.0);
        let b = m.add_resource(16.0);
        let g = m.add_flow(&[(r, 1.0), (b, 1.0)]);
        let h = m.add_flow(&[(b, 1.0)]);
        let mut changed = Vec::new();
        m.solve(&mut changed);
        assert_eq!((m.rate(g), m.rate(h)), (8.0, 8.0));
        let f = m.add_flow(&[(r, 1.0)]);
        let before = m.rounds;
        m.solve(&mut changed);
        assert_eq!((m.rate(f), m.rate(g), m.rate(h)), (5.0, 5.0, 11.0));
        // f and g, then h.
        assert_eq!(m.rounds - before, 2);
        changed.sort_unstable();
        assert_eq!(changed, vec![g, h, f]);
        // The new flow ends: g and h go back to sharing b.
        m.remove_flow(f);
        m.solve(&mut changed);
        assert_eq!((m.rate(g), m.rate(h)), (8.0, 8.0));
    }

    #[test]
    fn a_lone_flow_gets_exactly_its_alone_rate() {
        let mut m = MaxMin::default();
        let a = m.add_resource(0.0028);
        let b = m.add_resource(0.004);
        let uses = [(a, 2016.0 / 2048.0), (b, 1.0)];
        let (f, alone) = m.add_flow_alone(&uses);
        assert_eq!(alone.to_bits(), m.alone(&uses).to_bits());
        m.solve(&mut Vec::new());
        assert_eq!(m.rate(f).to_bits(), alone.to_bits());
    }

    /// A flow added at one end of a chain of links whose capacities grow along it moves
    /// every rate of the chain: the solve widens a few rounds, then solves the whole chain
    /// at once (not a thousand rounds), and gets the rates of a solve from scratch.
    #[test]
    fn a_change_along_a_long_chain_is_solved_in_few_rounds() {
        let n = 1000;
        let mut m = MaxMin::default();
        let links: Vec<u32> = (0..=n)
            .map(|i| m.add_resource(1.0 + i as f64 * 0.01))
            .collect();
        let uses: Vec<Vec<(u32, f64)>> = (0..n)
            .map(|i| vec![(links[i], 1.0), (links[i + 1], 1.0)])
            .collect();
        let ids: Vec<u32> = uses.iter().map(|u| m.add_flow(u)).collect();
        let mut changed = Vec::new();
        m.solve(&mut changed);
        m.rounds = 0;
        let extra = m.add_flow(&[(links[0], 1.0)]);
        m.solve(&mut changed);
        assert_eq!(changed.len(), n + 1, "every rate of the chain moves");
        assert!(m.rounds <= 2 * WHOLE_AFTER + 2, "{} rounds", m.rounds);
        let mut fresh = MaxMin::default();
        for i in 0..=n {
            fresh.add_resource(1.0 + i as f64 * 0.01);
        }
        let fresh_ids: Vec<u32> = uses.iter().map(|u| fresh.add_flow(u)).collect();
        let fresh_extra = fresh.add_flow(&[(links[0], 1.0)]);
        fresh.solve(&mut Vec::new());
        for (&a, &b) in ids.iter().zip(&fresh_ids).chain([(&extra, &fresh_extra)]) {
            let (got, want) = (m.rate(a), fresh.rate(b));
            assert!((got - want).abs() <= 1e-12 * want, "{got} against {want}");
        }
        assert!(m.overloaded().is_none() && m.unbottlenecked().is_none());
    }

    #[test]
    fn only_the_connected_flows_are_solved_again() {
        let mut m = MaxMin::default();
        let a = m.add_resource(1.0);
        let b = m.add_resource(1.0);
        let f1 = m.add_flow(&[(a, 1.0)]);
        let _f2 = m.add_flow(&[(b, 1.0)]);
        let mut changed = Vec::new();
        m.solve(&mut changed);
        let f3 = m.add_flow(&[(a, 1.0)]);
        m.solve(&mut changed);
        changed.sort_unstable();
        assert_eq!(changed, vec![f1, f3]);
        assert_eq!(m.rate(f1), 0.5);
    }

    proptest! {
        /// Random flows on random resources: no resource carries more than its capacity,
        /// every flow has a full resource where no flow is faster (max-min fairness).
        #[test]
        fn rates_are_feasible_and_max_min_fair(
            caps in prop::collection::vec(1u32..100, 1..12),
            flows in prop::collection::vec(prop::collection::vec((0usize..12, 1u32..4), 1..5), 1..30),
            removals in prop::collection::vec(0usize..30, 0..10),
        ) {
            let mut m = MaxMin::default();
            let rs: Vec<u32> = caps.iter().map(|&c| m.add_resource(c as f64)).collect();
            let mut ids = Vec::new();
            for f in &flows {
                let mut uses: Vec<(u32, f64)> = f.iter().map(|&(r, w)| (rs[r % rs.len()], w as f64)).collect();
                uses.sort_by_key(|u| u.0);
                uses.dedup_by_key(|u| u.0);
                ids.push(m.add_flow(&uses));
            }
            let mut changed = Vec::new();
            m.solve(&mut changed);
            let mut gone = std::collections::BTreeSet::new();
            for &i in &removals {
                if i < ids.len() && gone.insert(i) {
                    m.remove_flow(ids[i]);
                }
            }
            m.solve(&mut changed);
            prop_assert!(m.overloaded().is_none());
            prop_assert!(m.unbottlenecked().is_none());
            // On each flow's bottleneck (a full resource), no other flow is faster.
            for (i, &f) in ids.iter().enumerate() {
                if gone.contains(&i) { continue; }
                let rate = m.rate(f);
                let fair = m.uses(f).any(|(r, _)| {
                    let res = &m.resources[r as usize];
                    let load: f64 = res.flows.iter().map(|&(g, w)| w * m.rate(g)).sum();
                    load >= res.capacity * (1.0 - 1e-9)
                        && res.flows.iter().all(|&(g, _)| m.rate(g) <= rate * (1.0 + 1e-9))
                });
                prop_assert!(fair, "flow {} at {} has no bottleneck where it is fastest", f, rate);
            }
        }

        /// Flows starting and ending, solved now and then: the rates are those of a solve
        /// from scratch of the flows in flight (max-min rates are unique), and the
        /// tournament gives the scan's rates bit for bit.
        #[test]
        fn incremental_solves_match_a_solve_from_scratch(
            caps in prop::collection::vec(1u32..100, 1..16),
            ops in prop::collection::vec(
                (prop::collection::vec((0usize..16, 1u32..5), 1..6), 0usize..40, 0u32..4),
                1..60,
            ),
        ) {
            let mut scan = MaxMin::default();
            let mut tour = MaxMin { always_tournament: true, ..Default::default() };
            let mut rs = Vec::new();
            for &c in &caps {
                rs.push(scan.add_resource(c as f64));
                tour.add_resource(c as f64);
            }
            // Flows in flight: (id in scan, id in tour, uses).
            type Uses = Vec<(u32, f64)>;
            let mut live: Vec<(u32, u32, Uses)> = Vec::new();
            let (mut c1, mut c2) = (Vec::new(), Vec::new());
            for (flow, pick, what) in &ops {
                if *what == 0 && !live.is_empty() {
                    let (a, b, _) = live.swap_remove(pick % live.len());
                    scan.remove_flow(a);
                    tour.remove_flow(b);
                } else {
                    // Weights 1/4 to 5/4, as a DMA engine's below 1.
                    let mut uses: Vec<(u32, f64)> = flow
                        .iter()
                        .map(|&(r, w)| (rs[r % rs.len()], w as f64 / 4.0 + 0.25))
                        .collect();
                    uses.sort_by_key(|u| u.0);
                    uses.dedup_by_key(|u| u.0);
                    live.push((scan.add_flow(&uses), tour.add_flow(&uses), uses));
                }
                if *what == 3 {
                    continue; // more changes before the next solve
                }
                scan.solve(&mut c1);
                tour.solve(&mut c2);
                prop_assert_eq!(&c1, &c2);
                let mut fresh = MaxMin::default();
                for &c in &caps {
                    fresh.add_resource(c as f64);
                }
                let ids: Vec<u32> = live.iter().map(|(_, _, u)| fresh.add_flow(u)).collect();
                fresh.solve(&mut Vec::new());
                for (&(a, b, _), &f) in live.iter().zip(&ids) {
                    prop_assert_eq!(scan.rate(a).to_bits(), tour.rate(b).to_bits());
                    let (got, want) = (scan.rate(a), fresh.rate(f));
                    prop_assert!(
                        (got - want).abs() <= 1e-9 * want.max(1e-300),
                        "flow {}: {} incrementally, {} from scratch", a, got, want
                    );
                }
                prop_assert!(scan.overloaded().is_none());
                prop_assert!(scan.unbottlenecked().is_none());
            }
        }
    }
}
