/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unit tests for daemon/loop's worlds, with real threads: shared turns of
 * two workers run at the same time, never while an exclusive turn runs;
 * a watcher not marked shared makes its turn exclusive; work a shared
 * turn may not do waits for the next, exclusive, turn; a timer marked
 * shared fires in shared turns, one that is not makes its turn exclusive;
 * the first loop (main) runs shared turns too, alongside the workers'; a
 * timer another thread arms wakes a sleeping loop, and so does a polled
 * watcher another thread kicks (loop_fd_kick); a shared turn that
 * touches another loop stops the process; and so does a shared turn that
 * calls loop_assert_exclusive(), which an exclusive one passes.  A
 * polled watcher (loop_fd_poll) is polled in each busy turn after its
 * event and armed only before the loop sleeps, with one more poll for
 * what came before the arm; the busy-poll window keeps the loop from
 * sleeping.
 */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/wait.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "loop.h"
#include "tap.h"

#define NW 2

static struct loop *main_lp, *wl[NW];
static int stop_workers;
static int inside;		/* atomic: threads inside a shared handler */
static int most_inside;		/* the most seen at once */
static int excl_saw_shared;	/* an exclusive turn found one inside */
static int excl_turns, shared_calls, bad_mode;

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

static void
spin_us(unsigned us)
{
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1000000 +
	    (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void *
worker(void *arg)
{
	struct loop *lp = arg;

	loop_bind(lp);
	while (!__atomic_load_n(&stop_workers, __ATOMIC_ACQUIRE))
		(void)loop_run_once(lp, 50);
	return (NULL);
}

/* A shared watcher on an eventfd left readable: it runs every turn. */
static void
on_busy(void *arg, uint32_t events)
{
	int n;

	(void)arg;
	(void)events;
	if (loop_exclusive())
		__atomic_add_fetch(&bad_mode, 1, __ATOMIC_RELAXED);
	n = __atomic_add_fetch(&inside, 1, __ATOMIC_SEQ_CST);
	if (n > __atomic_load_n(&most_inside, __ATOMIC_RELAXED))
		__atomic_store_n(&most_inside, n, __ATOMIC_RELAXED);
	spin_us(50);
	__atomic_sub_fetch(&inside, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&shared_calls, 1, __ATOMIC_RELAXED);
}

/* Main's timer: an exclusive turn, which no shared handler may overlap. */
static struct loop_timer excl_t;

static void
on_excl(void *arg)
{

	(void)arg;
	if (!loop_exclusive())
		bad_mode++;
	if (__atomic_load_n(&inside, __ATOMIC_SEQ_CST) != 0)
		excl_saw_shared++;
	spin_us(200);
	if (__atomic_load_n(&inside, __ATOMIC_SEQ_CST) != 0)
		excl_saw_shared++;
	excl_turns++;
	loop_timer_arm(&excl_t, 1);
}

/* A job a shared handler defers without marking it shared. */
static struct loop_job later;
static int later_ran, later_excl;

static void
on_later(void *arg)
{

	(void)arg;
	later_ran++;
	later_excl = loop_exclusive() &&
	    __atomic_load_n(&inside, __ATOMIC_SEQ_CST) == 0;
}

static void
on_defer(void *arg, uint32_t events)
{
	int fd = *(int *)arg;
	uint64_t v;

	(void)events;
	(void)!read(fd, &v, sizeof(v));
	if (!loop_exclusive())
		loop_job_defer(&later);
}

/* A watcher not marked shared: its turn is exclusive. */
static int plain_ran, plain_excl;

static void
on_plain(void *arg, uint32_t events)
{
	int fd = *(int *)arg;
	uint64_t v;

	(void)events;
	(void)!read(fd, &v, sizeof(v));
	plain_ran++;
	plain_excl = loop_exclusive() &&
	    __atomic_load_n(&inside, __ATOMIC_SEQ_CST) == 0;
}

/* A shared timer on a worker, re-armed every millisecond. */
static struct loop_timer shared_t;
static int st_runs, st_shared;

static void
on_shared_timer(void *arg)
{

	(void)arg;
	__atomic_add_fetch(&st_runs, 1, __ATOMIC_RELAXED);
	if (!loop_exclusive())
		__atomic_add_fetch(&st_shared, 1, __ATOMIC_RELAXED);
	loop_timer_arm(&shared_t, 1);
}

/* A shared watcher on main: its turns overlap the workers' shared ones. */
static int main_shared, main_overlap;

static void
on_main_busy(void *arg, uint32_t events)
{

	(void)arg;
	(void)events;
	if (loop_exclusive())
		return;
	main_shared++;
	spin_us(50);
	if (__atomic_load_n(&inside, __ATOMIC_SEQ_CST) != 0)
		main_overlap++;
}

/* A timer main arms on a sleeping worker's loop. */
static struct loop_timer remote_t;
static uint64_t remote_fired;

static void
on_remote(void *arg)
{

	(void)arg;
	__atomic_store_n(&remote_fired, now_ms(), __ATOMIC_RELEASE);
}

static void
kick(int fd)
{
	uint64_t one = 1;

	(void)!write(fd, &one, sizeof(one));
}

/* Run main's loop until ${cond} holds or ${ms} pass. */
#define RUN_UNTIL(cond, ms) do {					\
	uint64_t until_ = now_ms() + (ms);				\
	while (!(cond) && now_ms() < until_)				\
		(void)loop_run_once(main_lp, 10);			\
} while (0)

/*
 * The workers' watchers go in an exclusive turn of main's, as Threads in
 * loop.h has it: a watcher of a running loop deleted from outside any
 * turn races with that loop's own reaping.
 */
static struct loop_fd *busy[NW], *dw, *pw;
static int quieted;

static void
on_quiet(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < NW; i++)
		loop_fd_del(busy[i]);
	loop_fd_del(dw);
	loop_fd_del(pw);
	quieted = 1;
}

static void
test_world(void)
{
	pthread_t th[NW];
	struct loop_timer quiet_t;
	struct loop_fd *mw;
	int busy_fd[NW], dfd, pfd, mfd, i;

	ok((main_lp = loop_new()) != NULL, "main loop");
	ok(loop_world_new(main_lp) == 0, "a world");
	for (i = 0; i < NW; i++) {
		ok((wl[i] = loop_new()) != NULL &&
		    loop_world_join(wl[i], main_lp) == 0, "worker %d joins", i);
		busy_fd[i] = eventfd(1, EFD_NONBLOCK);
		busy[i] = loop_fd_add(wl[i], busy_fd[i], EPOLLIN, on_busy,
		    NULL);
		loop_fd_share(busy[i], 1);
	}
	dfd = eventfd(0, EFD_NONBLOCK);
	dw = loop_fd_add(wl[0], dfd, EPOLLIN, on_defer, &dfd);
	loop_fd_share(dw, 1);
	loop_job_init(&later, wl[0], on_later, NULL);
	pfd = eventfd(0, EFD_NONBLOCK);
	pw = loop_fd_add(wl[1], pfd, EPOLLIN, on_plain, &pfd);
	loop_timer_init(&excl_t, main_lp, on_excl, NULL);
	loop_timer_arm(&excl_t, 1);
	loop_timer_init(&shared_t, wl[1], on_shared_timer, NULL);
	loop_timer_arm(&shared_t, 1);
	loop_timer_share(&shared_t, 1);
	mfd = eventfd(1, EFD_NONBLOCK);
	mw = loop_fd_add(main_lp, mfd, EPOLLIN, on_main_busy, NULL);
	loop_fd_share(mw, 1);
	for (i = 0; i < NW; i++)
		pthread_create(&th[i], NULL, worker, wl[i]);

	RUN_UNTIL(excl_turns >= 200 &&
	    __atomic_load_n(&most_inside, __ATOMIC_RELAXED) >= 2, 20000);
	ok(excl_turns >= 200, "main ran %d exclusive turns", excl_turns);
	ok(loop_exclusive_turns(main_lp) >= (uint64_t)excl_turns &&
	    loop_exclusive_turns(main_lp) < (uint64_t)excl_turns +
	    (uint64_t)main_shared, "the world counted them (%llu)",
	    (unsigned long long)loop_exclusive_turns(main_lp));
	ok(__atomic_load_n(&shared_calls, __ATOMIC_RELAXED) > 1000,
	    "workers ran %d shared handlers meanwhile", shared_calls);
	ok(most_inside == NW, "both workers' shared turns ran at once");
	ok(excl_saw_shared == 0, "no shared handler ran during an exclusive "
	    "turn (%d did)", excl_saw_shared);
	ok(bad_mode == 0, "loop_exclusive says which turn it is");
	ok(st_runs > 50 && st_shared > st_runs / 2, "a shared timer fired "
	    "in shared turns (%d of %d)", st_shared, st_runs);
	ok(main_shared > 50 && main_overlap > 0, "main ran shared turns (%d), "
	    "%d of them alongside a worker's", main_shared, main_overlap);

	kick(dfd);
	RUN_UNTIL(__atomic_load_n(&later_ran, __ATOMIC_ACQUIRE) > 0, 10000);
	ok(later_ran == 1 && later_excl, "a job a shared turn deferred ran "
	    "in the next turn, exclusive");
	kick(pfd);
	RUN_UNTIL(__atomic_load_n(&plain_ran, __ATOMIC_ACQUIRE) > 0, 10000);
	ok(plain_ran == 1 && plain_excl, "a watcher not marked shared ran "
	    "in an exclusive turn");

	/* Quiet the workers: they sleep in epoll_wait, 50 ms at a time. */
	loop_timer_stop(&excl_t);
	loop_timer_init(&quiet_t, main_lp, on_quiet, NULL);
	loop_timer_arm(&quiet_t, 0);
	RUN_UNTIL(quieted, 10000);
	loop_fd_del(mw);
	close(mfd);
	for (i = 0; i < NW; i++)
		close(busy_fd[i]);
	__atomic_store_n(&stop_workers, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NW; i++)
		pthread_join(th[i], NULL);
	loop_timer_stop(&shared_t);
	close(dfd);
	close(pfd);
}

/* A worker of ${lp} that waits up to 30 s at a time until *${done}. */
struct sleeper {
	struct loop *lp;
	uint64_t *done;		/* atomic */
};

static void *
sleeper(void *arg)
{
	struct sleeper *sl = arg;

	loop_bind(sl->lp);
	while (__atomic_load_n(sl->done, __ATOMIC_ACQUIRE) == 0 &&
	    !__atomic_load_n(&stop_workers, __ATOMIC_ACQUIRE))
		(void)loop_run_once(sl->lp, 30000);
	return (NULL);
}

static struct loop_timer arm_t;

static void
on_arm(void *arg)
{

	(void)arg;
	loop_timer_arm(&remote_t, 0);
}

/* Main arms the worker a timer due now. */
static void
test_wake(void)
{
	struct sleeper sl = { wl[0], &remote_fired };
	pthread_t th;
	uint64_t armed;

	__atomic_store_n(&stop_workers, 0, __ATOMIC_RELEASE);
	loop_timer_init(&remote_t, wl[0], on_remote, NULL);
	loop_timer_init(&arm_t, main_lp, on_arm, NULL);
	pthread_create(&th, NULL, sleeper, &sl);
	/* Let it settle into its long wait, then arm from a main turn. */
	RUN_UNTIL(0, 300);
	armed = now_ms();
	loop_timer_arm(&arm_t, 0);
	RUN_UNTIL(__atomic_load_n(&remote_fired, __ATOMIC_ACQUIRE) != 0,
	    20000);
	ok(remote_fired != 0 && remote_fired - armed < 15000, "a timer main "
	    "armed on a sleeping worker's loop woke it (%llu ms, its wait "
	    "was 30 s)", (unsigned long long)(remote_fired - armed));
	__atomic_store_n(&stop_workers, 1, __ATOMIC_RELEASE);
	loop_wake(wl[0]);
	pthread_join(th, NULL);
}

/* In a child: a shared handler arms a timer of another loop. */
static struct loop_timer other_t;

static void
on_nothing(void *arg)
{

	(void)arg;
}

static void
on_trespass(void *arg, uint32_t events)
{

	(void)arg;
	(void)events;
	loop_timer_arm(&other_t, 1000);
}

static void
test_trespass(void)
{
	struct loop_fd *w;
	pid_t pid;
	int st, fd;

	if ((pid = fork()) == 0) {
		fd = eventfd(1, EFD_NONBLOCK);
		loop_timer_init(&other_t, wl[1], on_nothing, NULL);
		w = loop_fd_add(wl[0], fd, EPOLLIN, on_trespass, NULL);
		loop_fd_share(w, 1);
		loop_bind(wl[0]);
		(void)loop_run_once(wl[0], 1000);
		_exit(0);
	}
	ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) &&
	    WTERMSIG(st) == SIGABRT, "a shared turn that touches another "
	    "loop's timer aborts");
}

/*
 * In a child, with real threads: a fresh world of the main loop and one
 * worker, both running; the worker's watcher calls loop_assert_exclusive()
 * in a shared turn (if ${shared}) or an exclusive one.  The child exits 0
 * once the handler got past the assertion, 3 if it never ran.
 */
static int asserted;

static void
on_assert(void *arg, uint32_t events)
{
	int *fd = arg;
	uint64_t v;

	(void)events;
	(void)!read(*fd, &v, sizeof(v));
	loop_assert_exclusive();
	__atomic_store_n(&asserted, 1, __ATOMIC_RELEASE);
}

static int
assert_child(int shared)
{
	struct loop *m, *w;
	struct loop_fd *mw, *aw;
	pthread_t th;
	uint64_t until;
	int st, fd, mfd;
	pid_t pid;

	if ((pid = fork()) == 0) {
		m = loop_new();
		w = loop_new();
		if (m == NULL || w == NULL || loop_world_new(m) != 0 ||
		    loop_world_join(w, m) != 0)
			_exit(2);
		/* Main keeps taking shared turns alongside the worker's. */
		mfd = eventfd(1, EFD_NONBLOCK);
		mw = loop_fd_add(m, mfd, EPOLLIN, on_main_busy, NULL);
		loop_fd_share(mw, 1);
		fd = eventfd(0, EFD_NONBLOCK);
		aw = loop_fd_add(w, fd, EPOLLIN, on_assert, &fd);
		loop_fd_share(aw, shared);
		stop_workers = 0;
		pthread_create(&th, NULL, worker, w);
		(void)!write(fd, &(uint64_t){ 1 }, sizeof(uint64_t));
		until = now_ms() + 10000;
		while (!__atomic_load_n(&asserted, __ATOMIC_ACQUIRE) &&
		    now_ms() < until)
			(void)loop_run_once(m, 10);
		_exit(asserted ? 0 : 3);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return (-1);
	return (st);
}

static void
test_assert(void)
{
	int st;

	st = assert_child(1);
	ok(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
	    "loop_assert_exclusive() in a worker's shared turn aborts");
	st = assert_child(0);
	ok(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "loop_assert_exclusive() in a worker's exclusive turn passes");
}

/* Without a world, every turn is exclusive, as before. */
static void
test_plain(void)
{
	struct loop *lp = loop_new();
	struct loop_fd *w;
	int fd = eventfd(1, EFD_NONBLOCK);

	plain_ran = 0;
	w = loop_fd_add(lp, fd, EPOLLIN, on_plain, &fd);
	loop_fd_share(w, 1);
	(void)loop_run_once(lp, 1000);
	ok(plain_ran == 1 && loop_exclusive(), "a loop in no world runs "
	    "every turn exclusive");
	loop_fd_del(w);
	close(fd);
	loop_free(lp);
}

/*
 * A completion queue as the loop sees one: items queue without a word
 * unless it is armed, when the next one makes its eventfd readable once
 * (and disarms it).  The callback takes the event and the items, as
 * on_cq does; poll takes the items; arm arms.
 */
struct fakecq {
	int fd, armed;
	unsigned queued, taken, polls, arms, events;
	unsigned sneak;		/* items that land as it is armed */
};

static void
cq_add(struct fakecq *q, unsigned k)
{

	q->queued += k;
	if (q->armed && k > 0) {
		q->armed = 0;
		(void)!write(q->fd, &(uint64_t){ 1 }, sizeof(uint64_t));
	}
}

static void
on_fakecq(void *arg, uint32_t events)
{
	struct fakecq *q = arg;
	uint64_t v;

	(void)events;
	if (read(q->fd, &v, sizeof(v)) == sizeof(v))
		q->events++;
	q->taken += q->queued;
	q->queued = 0;
}

static int
fakecq_poll(void *arg)
{
	struct fakecq *q = arg;
	unsigned n = q->queued;

	q->polls++;
	q->taken += n;
	q->queued = 0;
	return (n > 0);
}

static int
fakecq_arm(void *arg)
{
	struct fakecq *q = arg;

	q->arms++;
	/* Landed just before the arm: it raises no event. */
	q->queued += q->sneak;
	q->sneak = 0;
	q->armed = 1;
	return (0);
}

static void
on_tick(void *arg, uint32_t events)
{

	(void)arg;
	(void)events;
}

static void
test_poll(void)
{
	struct loop *lp = loop_new();
	struct loop_fd *w, *bw[2];
	struct fakecq q = { .armed = 1 };
	unsigned polls, i;
	/* Always readable: two of them make every turn a busy one. */
	int bfd[2] = { eventfd(1, EFD_NONBLOCK), eventfd(1, EFD_NONBLOCK) };

	q.fd = eventfd(0, EFD_NONBLOCK);
	w = loop_fd_add(lp, q.fd, EPOLLIN, on_fakecq, &q);
	loop_fd_poll(w, fakecq_poll, fakecq_arm);
	for (i = 0; i < 2; i++)
		bw[i] = loop_fd_add(lp, bfd[i], EPOLLIN, on_tick, NULL);
	cq_add(&q, 3);
	(void)loop_run_once(lp, 1000);
	ok(q.events == 1 && q.taken == 3 && q.polls == 0, "a polled "
	    "watcher's event runs its callback, which takes what queued");
	for (i = 0; i < 5; i++) {
		cq_add(&q, 2);
		(void)loop_run_once(lp, 1000);
	}
	ok(q.polls == 5 && q.taken == 13 && q.arms == 0 && q.events == 1,
	    "while the loop is busy it polls each turn (%u polls, %u taken) "
	    "and never arms (%u)", q.polls, q.taken, q.arms);
	/* Idle: it arms before sleeping and polls once more, which finds
	 * what landed before the arm. */
	for (i = 0; i < 2; i++)
		loop_fd_del(bw[i]);
	q.sneak = 1;
	(void)loop_run_once(lp, 1000);
	ok(q.arms == 1 && q.taken == 14 && q.queued == 0, "before the "
	    "loop sleeps it arms, then polls once more: what landed before "
	    "the arm is taken (%u arms, %u taken)", q.arms, q.taken);
	polls = q.polls;
	(void)loop_run_once(lp, 20);
	ok(q.polls == polls && q.arms == 1, "an armed watcher is not "
	    "polled while the loop sleeps");
	/* A quiet turn (its event the only one) arms at its end. */
	cq_add(&q, 1);
	q.sneak = 1;
	(void)loop_run_once(lp, 1000);
	ok(q.events == 2 && q.arms == 2 && q.taken == 16, "the next item "
	    "wakes the loop through the descriptor, and that quiet turn "
	    "arms again as it ends, polling once more (%u arms, %u taken)",
	    q.arms, q.taken);
	polls = q.polls;
	(void)loop_run_once(lp, 20);
	ok(q.polls == polls, "then it sleeps");
	/* The busy-poll window: no sleep, so no arm, until it closes. */
	loop_busy_poll(lp, 10000000);
	cq_add(&q, 1);
	(void)loop_run_once(lp, 1000);
	for (i = 0; i < 3; i++)
		(void)loop_run_once(lp, 1000);
	cq_add(&q, 1);
	(void)loop_run_once(lp, 1000);
	ok(q.arms == 2 && q.events == 3 && q.taken == 18, "within the "
	    "busy-poll window the loop polls instead of arming and "
	    "sleeping (%u arms, %u taken)", q.arms, q.taken);
	loop_busy_poll(lp, 0);
	(void)loop_run_once(lp, 1000);
	ok(q.arms == 3, "with the window closed it arms again");
	/* A watcher deleted while polled is never polled again. */
	for (i = 0; i < 2; i++)
		bw[i] = loop_fd_add(lp, bfd[i], EPOLLIN, on_tick, NULL);
	cq_add(&q, 1);
	(void)loop_run_once(lp, 1000);
	(void)loop_run_once(lp, 1000);
	polls = q.polls;
	loop_fd_del(w);
	for (i = 0; i < 3; i++)
		(void)loop_run_once(lp, 1000);
	ok(q.polls == polls && polls > 0, "a deleted watcher is polled no "
	    "more");
	for (i = 0; i < 2; i++) {
		loop_fd_del(bw[i]);
		close(bfd[i]);
	}
	close(q.fd);
	loop_free(lp);
}

/* Whether fakecq's last poll ran in an exclusive turn. */
static int fq_excl;

static int
fakecq_poll_mode(void *arg)
{

	fq_excl = loop_exclusive();
	return (fakecq_poll(arg));
}

/*
 * In a world (of one loop): a polled watcher not marked shared, beside
 * shared busy ones, is armed in a shared turn and polled a last time in
 * the next, exclusive, turn; it does not make every busy turn exclusive.
 */
static void
test_poll_world(void)
{
	struct loop *lp = loop_new();
	struct loop_fd *w, *bw[2];
	struct fakecq q = { .armed = 1 };
	uint64_t ex0;
	unsigned i;
	int bfd[2] = { eventfd(1, EFD_NONBLOCK), eventfd(1, EFD_NONBLOCK) };

	ok(lp != NULL && loop_world_new(lp) == 0, "poll world: a world");
	q.fd = eventfd(0, EFD_NONBLOCK);
	w = loop_fd_add(lp, q.fd, EPOLLIN, on_fakecq, &q);
	loop_fd_poll(w, fakecq_poll_mode, fakecq_arm);
	for (i = 0; i < 2; i++) {
		bw[i] = loop_fd_add(lp, bfd[i], EPOLLIN, on_tick, NULL);
		loop_fd_share(bw[i], 1);
	}
	cq_add(&q, 1);
	ex0 = loop_exclusive_turns(lp);
	(void)loop_run_once(lp, 1000);
	ok(q.taken == 1 && loop_exclusive_turns(lp) == ex0 + 1, "poll "
	    "world: its event runs in an exclusive turn");
	(void)loop_run_once(lp, 1000);
	ok(q.arms == 1 && q.polls == 0 && loop_exclusive_turns(lp) ==
	    ex0 + 1, "poll world: the next busy turn is shared, and arms it "
	    "rather than polling it");
	q.queued = 2;		/* landed before the arm: no event */
	q.armed = 0;
	(void)loop_run_once(lp, 1000);
	ok(q.polls == 1 && fq_excl && q.taken == 3 &&
	    loop_exclusive_turns(lp) == ex0 + 2, "poll world: the turn "
	    "after is exclusive, for its last poll, which takes what landed "
	    "before the arm");
	for (i = 0; i < 3; i++)
		(void)loop_run_once(lp, 1000);
	ok(q.polls == 1 && loop_exclusive_turns(lp) == ex0 + 2, "poll world: "
	    "then it waits for its descriptor, and busy turns stay shared");
	for (i = 0; i < 2; i++) {
		loop_fd_del(bw[i]);
		close(bfd[i]);
	}
	loop_fd_del(w);
	close(q.fd);
	loop_free(lp);
}

/*
 * A polled watcher of a sleeping worker, kicked from main's exclusive
 * turn (work posted there that the worker must poll for, with nothing
 * armed to raise an event): the worker wakes when that turn ends and
 * polls it, rather than sleeping on.
 */
static struct fakecq kq;
static struct loop_fd *kw;
static struct loop_timer kick_t;
static uint64_t kick_taken;	/* atomic: what the worker's polls took */

static int
kick_poll(void *arg)
{
	int r = fakecq_poll(arg);

	__atomic_store_n(&kick_taken, kq.taken, __ATOMIC_RELEASE);
	return (r);
}

static void
on_kick(void *arg)
{

	(void)arg;
	kq.armed = 0;		/* no event: only a poll finds these */
	cq_add(&kq, 2);
	loop_fd_kick(kw);
}

static struct loop_timer settle_t;

static void
on_settle(void *arg)
{

	(void)arg;
}

static void
test_kick(void)
{
	struct sleeper sl = { wl[1], &kick_taken };
	pthread_t th;
	uint64_t kicked, took;

	__atomic_store_n(&stop_workers, 0, __ATOMIC_RELEASE);
	kq.fd = eventfd(0, EFD_NONBLOCK);
	kw = loop_fd_add(wl[1], kq.fd, EPOLLIN, on_fakecq, &kq);
	loop_fd_poll(kw, kick_poll, fakecq_arm);
	loop_timer_init(&kick_t, main_lp, on_kick, NULL);
	pthread_create(&th, NULL, sleeper, &sl);
	/* An exclusive turn of main's first, which wakes the worker for
	 * the watcher added above; then it settles into its long wait. */
	loop_timer_init(&settle_t, main_lp, on_settle, NULL);
	loop_timer_arm(&settle_t, 0);
	RUN_UNTIL(0, 300);
	kicked = now_ms();
	loop_timer_arm(&kick_t, 0);
	RUN_UNTIL(__atomic_load_n(&kick_taken, __ATOMIC_ACQUIRE) != 0, 20000);
	took = now_ms() - kicked;
	ok(__atomic_load_n(&kick_taken, __ATOMIC_ACQUIRE) == 2 &&
	    took < 15000, "a watcher main kicked on a sleeping worker's loop "
	    "woke it, and its poll took what was queued (%llu ms, its wait "
	    "was 30 s)", (unsigned long long)took);
	__atomic_store_n(&stop_workers, 1, __ATOMIC_RELEASE);
	loop_wake(wl[1]);
	pthread_join(th, NULL);
	loop_fd_del(kw);
	close(kq.fd);
}

int
main(void)
{
	int i;

	test_plain();
	test_poll();
	test_poll_world();
	test_world();
	test_wake();
	test_kick();
	test_trespass();
	test_assert();
	for (i = 0; i < NW; i++)
		loop_free(wl[i]);
	loop_free(main_lp);
	return (tap_done());
}
