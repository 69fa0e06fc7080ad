# Issue 51 ("make the classes impossible"): sync_up over random trees.
# Each round builds a random local tree (nested directories, empty and
# larger files, hostile names) and a random target on the host that
# disagrees with it in every way the module documents a rule for, plus a
# sentinel directory outside the target that the target's symlinks and
# hard links point into. After one sync_up (with the host's tar in even
# rounds, without it in odd ones) the target must be exactly what the
# module's rules say (lstat by lstat: types, bytes, file modes, link
# targets), nothing outside the target may change or appear, and
# on_change must name exactly the files that were written.
#
# The rules (perldoc Rex::Commands::Fastsum), which the model below
# applies to the target as it was before the sync:
# - every local file ends up on the host as a real file with its bytes and
#   mode, unless the host already had a real file with those bytes (then
#   it is not sent: its mode stays; "holds other bytes of");
# - a symlink or a file on the host where a local file or directory goes
#   (at its path or above it) is removed, a real one is put there; what a
#   link pointed at is never written to, a hard link's other names keep
#   their bytes;
# - a real directory on the host where the local tree has a file is NOT
#   removed: that file fails, the others are put in place, the task dies
#   naming it (some rounds have one; once it is removed by hand the next
#   run passes);
# - nothing else is deleted: the host's extra files, directories and
#   symlinks stay; empty local directories are not made (only files are
#   sent, as stock Rex::Commands::Sync does).
# A second run finds nothing to send.
#
# FASTSUM_REX_SEED=N repeats a run, FASTSUM_REX_ROUNDS=N sets the rounds.
use v5.12.5;
use warnings;
use Test::More;
use File::Temp ();
use Digest::MD5 qw(md5_hex);
use lib 't/lib';
use TestHost;    # skips the file with the reason where sshd, Rex or fastsum is missing

my $seed   = $ENV{FASTSUM_REX_SEED} // ( time ^ $$ ) % 1_000_000;
my $rounds = $ENV{FASTSUM_REX_ROUNDS} // 6;
diag("seed $seed (FASTSUM_REX_SEED=$seed repeats this run), $rounds rounds");
srand($seed);

my $host = TestHost->start;
my $d    = File::Temp->newdir;

my @hostile = (
  "sp ace", "new\nline", "quote's \"dq\"", "-dash", "--", '$(touch PWNED)', '`touch PWNED`',
  "back\\slash", "star*?", "tab\there", ".hidden", "latin1-\xe9", "\xc3\xa9t\xc3\xa9",
);

sub pick { $_[ int rand @_ ] }
sub chance { rand() < $_[0] }

sub random_bytes {
  my $size = pick( 0, 0, 1, 2, 17, 511, 512, 4096, int( rand 3000 ), int( rand 70000 ) );
  return pack( 'C*', map { int rand 256 } 1 .. $size );
}

sub mode_string { sprintf( '%04o', $_[0] ) }

# Every entry under $root, not following links: relative name => what it
# is. %o: dir_modes, skip => top-level names to leave out.
sub walk {
  my ( $root, %o ) = @_;
  my %tree;
  my @dirs = ('');
  while ( defined( my $rel = shift @dirs ) ) {
    my $dir = length $rel ? "$root/$rel" : $root;
    opendir( my $dh, $dir ) or die("$dir: $!");
    for my $e ( sort grep { $_ ne '.' && $_ ne '..' } readdir($dh) ) {
      next if !length $rel && grep { $_ eq $e } @{ $o{skip} // [] };
      my $r  = length $rel ? "$rel/$e" : $e;
      my $p  = "$root/$r";
      my @st = lstat($p) or die("$p: $!");
      if ( -l _ ) { $tree{$r} = 'link to ' . readlink($p) }
      elsif ( -d _ ) {
        $tree{$r} = $o{dir_modes} ? 'dir ' . mode_string( $st[2] & 07777 ) : 'dir';
        push @dirs, $r;
      }
      elsif ( -f _ ) {
        open( my $fh, '<:raw', $p ) or die("$p: $!");
        $tree{$r} = 'file ' . mode_string( $st[2] & 07777 ) . ' ' . Digest::MD5->new->addfile($fh)->hexdigest;
      }
      else { $tree{$r} = 'other' }
    }
  }
  return \%tree;
}

sub put_file {
  my ( $path, $content, $mode ) = @_;
  open( my $fh, '>:raw', $path ) or die("$path: $!");
  print {$fh} $content;
  close($fh);
  chmod( $mode, $path ) or die("$path: $!");
}

# A random local tree under $root: relative name => [ 'f', bytes, mode ]
# or [ 'd' ].
sub local_tree {
  my ($root) = @_;
  my %tree;
  my $fill;
  $fill = sub {
    my ( $rel, $depth ) = @_;
    my %used;
    for ( 1 .. int( rand( $depth ? 5 : 7 ) ) + ( $depth ? 0 : 2 ) ) {
      my $name = chance(0.35) ? pick(@hostile) : join( '', map { pick( 'a' .. 'z' ) } 0 .. rand 6 );
      $name .= '.tpl.x' if $name =~ /\.tpl$/;    # parse_templates would render it
      next if $used{$name}++;
      my $r = length $rel ? "$rel/$name" : $name;
      if ( $depth < 3 && chance(0.35) ) {
        mkdir("$root/$r") or die("$r: $!");
        $tree{$r} = ['d'];
        $fill->( $r, $depth + 1 );
      }
      else {
        my ( $bytes, $mode ) = ( random_bytes(), pick( 0644, 0600, 0755, 0640, 0444 ) );
        put_file( "$root/$r", $bytes, $mode );
        utime( 1_600_000_000, 1_600_000_000, "$root/$r" );
        $tree{$r} = [ 'f', $bytes, $mode ];
      }
    }
  };
  $fill->( '', 0 );
  return \%tree;
}

# The host's target, built from the local tree: for each local entry
# whose parent is a real directory on the host, one of the ways it may
# differ; plus extras the local tree lacks. Links and hard links point
# into $out (outside the target). Returns the name of the directory put
# where a local file goes, if any.
sub remote_tree {
  my ( $local, $dst, $out, $clash_ok ) = @_;
  my ( $n, $clash ) = ( 0, undef );
  my %real_dir = ( '' => 1 );
  for my $r ( sort keys %$local ) {
    my ( $parent, $name ) = $r =~ m{^(?:(.*)/)?([^/]*)$}s;
    next if !$real_dir{ $parent // '' };
    my ( $kind, $bytes, $mode ) = @{ $local->{$r} };
    my $p = "$dst/$r";
    my $o = "$out/o" . $n++;
    if ( $kind eq 'd' ) {
      my $how = pick(qw(dir dir dir dir absent file link));
      if ( $how eq 'dir' ) { mkdir($p) or die("$p: $!"); $real_dir{$r} = 1 }
      elsif ( $how eq 'file' ) { put_file( $p, "host file where a directory goes\n", 0644 ) }
      elsif ( $how eq 'link' ) {
        # Outside: a directory holding the same names as the local one,
        # some with the local bytes (a sync that followed the link would
        # see nothing to send).
        mkdir($o) or die("$o: $!");
        for my $c ( sort grep { m{^\Q$r\E/[^/]+$} && $local->{$_}[0] eq 'f' } keys %$local ) {
          my ($base) = $c =~ m{([^/]+)$};
          put_file( "$o/$base", chance(0.5) ? $local->{$c}[1] : "OUTSIDE $base\n", $local->{$c}[2] | 0200 );
        }
        symlink( $o, $p ) or die("$p: $!");
      }
      next;
    }
    my @ways = qw(equal equal equal other same-size absent link link-dir dangling hard mode);
    push @ways, ("clash") x 3 if $clash_ok && !defined $clash;
    my $how = pick(@ways);
    $how = 'other' if $how eq 'same-size' && !length $bytes;
    if ( $how eq 'equal' ) { put_file( $p, $bytes, $mode ) }
    elsif ( $how eq 'mode' ) { put_file( $p, $bytes, $mode ^ 0100 ) }
    elsif ( $how eq 'other' ) { put_file( $p, random_bytes() . 'x', pick( 0644, 0600 ) ) }
    elsif ( $how eq 'same-size' ) {
      # One byte changed, size and mtime as the local file's.
      my $i = int rand length $bytes;
      put_file( $p, substr( $bytes, 0, $i ) . chr( ord( substr( $bytes, $i, 1 ) ) ^ 1 ) . substr( $bytes, $i + 1 ), $mode );
      utime( 1_600_000_000, 1_600_000_000, $p );
    }
    elsif ( $how eq 'link' ) {
      put_file( $o, chance(0.5) ? $bytes : "OUTSIDE $name\n", 0644 );
      symlink( chance(0.5) ? $o : "../" x ( ( $r =~ tr{/}{} ) + 1 ) . "outside/o" . ( $n - 1 ), $p ) or die $!;
    }
    elsif ( $how eq 'link-dir' ) { mkdir($o) or die $!; put_file( "$o/f", "OUTSIDE f\n", 0644 ); symlink( $o, $p ) or die $! }
    elsif ( $how eq 'dangling' ) { symlink( "$o-nowhere", $p ) or die $! }
    elsif ( $how eq 'hard' ) { put_file( $o, "OUTSIDE hard $name\n", $mode ); link( $o, $p ) or die $! }
    elsif ( $how eq 'clash' ) { mkdir($p) or die $!; put_file( "$p/keep", "the host's\n", 0644 ); $clash = $r }
  }
  extras( $local, $dst, $out, \%real_dir );
  return $clash;
}

# In some real directories of the host: a file, a directory, a symlink to
# outside that the local tree does not have (they stay).
sub extras {
  my ( $local, $dst, $out, $real_dir ) = @_;
  my $n = 0;
  for my $dir ( sort keys %$real_dir ) {
    next if !chance(0.4);
    my $base = length $dir ? "$dst/$dir" : $dst;
    my $name = 'extra ' . pick(@hostile) . $n++;
    my $how  = pick(qw(file dir link));
    if ( $how eq 'file' ) { put_file( "$base/$name", random_bytes(), 0644 ) }
    elsif ( $how eq 'dir' ) { mkdir("$base/$name") or die $!; put_file( "$base/$name/f", "extra\n", 0600 ) }
    else { symlink( "$out", "$base/$name" ) or die $! }
  }
}

# What the target must be after a sync_up (the rules above), and which
# files are sent (on_change) and which fail.
sub expected {
  my ( $before, $local ) = @_;
  my %want = %$before;
  my ( @sent, @failed );
  for my $r ( sort grep { $local->{$_}[0] eq 'f' } keys %$local ) {
    my @parts = split( m{/}, $r );
    pop @parts;
    my $a = '';
    for (@parts) {
      $a = length $a ? "$a/$_" : $_;
      # A link or a file above gives way; there was nothing under it.
      $want{$a} = 'dir' if ( $want{$a} // '' ) ne 'dir';
    }
    if ( ( $want{$r} // '' ) eq 'dir' ) { push @failed, $r; next }
    my ( undef, $bytes, $mode ) = @{ $local->{$r} };
    my $file = 'file ' . mode_string($mode) . ' ' . md5_hex($bytes);
    next if ( $want{$r} // '' ) =~ m/^file \d+ \Q@{[ md5_hex($bytes) ]}\E$/;
    $want{$r} = $file;
    push @sent, $r;
  }
  return ( \%want, \@sent, \@failed );
}

my $no_tar = "$d/no-tar-bin";
mkdir $no_tar;
for my $tool (qw(sh perl find xargs od mktemp rm mv chmod chown chgrp mkdir dd sort tr cat grep wc uname head env sleep kill)) {
  chomp( my $real = `sh -c 'command -v $tool'` );
  symlink( $real, "$no_tar/$tool" ) or die("$tool: $!") if $real;
}

# One rex run syncs every round of @$rounds (one Rexfile's path: with the
# host's tar or without), each in an eval: status and log of the run, and
# for each round whether sync_up died (its message) and what on_change
# named (relative to its target).
sub sync {
  my ( $rounds, $path ) = @_;
  # (Hex in the environment: names hold anything but NUL, which it cannot.)
  local $ENV{FASTSUM_REX_PAIRS} =
    join( ' ', map { unpack( 'H*', $_ ) } map { ( $_->{i}, $_->{src}, $_->{dst} ) } @$rounds );
  my ( $status, $log ) = $host->run_rex(
    use  => 'use Rex::Commands::Fastsum',
    path => $path,
    body => <<'BODY' );
my @p = map { pack( 'H*', $_ ) } split( / /, $ENV{FASTSUM_REX_PAIRS} );
while ( my ( $i, $s, $t ) = splice( @p, 0, 3 ) ) {
  eval { sync_up $s, $t, { on_change => sub { print "CHANGED $i ", unpack( "H*", $_ ), "\n" for @_ } }; 1 }
    or print "DIED $i ", unpack( "H*", $@ ), "\n";
}
BODY
  for my $r (@$rounds) {
    $r->{changed} = [ sort map { substr( pack( 'H*', $_ ), length( $r->{dst} ) + 1 ) }
        $log =~ m/^(?:\e\[0m)?CHANGED $r->{i} ([0-9a-f]+)$/mg ];
    my ($died) = $log =~ m/^(?:\e\[0m)?DIED $r->{i} ([0-9a-f]+)$/m;
    $r->{died} = defined $died ? pack( 'H*', $died ) : undef;
  }
  return ( $status, $log );
}

# Runs every round, the ones with tar and the ones without.
sub sync_all {
  my ( $rounds, $what ) = @_;
  for my $how ( 'tar', 'no tar' ) {
    my @these = grep { $_->{how} eq $how } @$rounds;
    next if !@these;
    my ( $status, $log ) = sync( \@these, $how eq 'tar' ? [ '/usr/bin', '/bin' ] : [$no_tar] );
    is( $status, 0, "$what, $how: rex ran" ) or diag($log);
  }
}

my $pwned_home = -e "$ENV{HOME}/PWNED";
my $target     = "t a'r\$(get) -x";    # the target's own name is hostile too
my @rounds;
for my $i ( 1 .. $rounds ) {
  my $w = File::Temp->newdir( DIR => $d );
  my $r = { i => $i, w => $w, how => $i % 2 ? 'tar' : 'no tar', src => "$w/src", dst => "$w/$target" };
  $r->{t} = "round $i ($r->{how}, seed $seed)";
  mkdir $_ or die("$_: $!") for $r->{src}, $r->{dst}, "$w/outside";
  put_file( "$w/outside/sentinel", "OUTSIDE sentinel\n", 0600 );
  $r->{local} = local_tree( $r->{src} );
  remote_tree( $r->{local}, $r->{dst}, "$w/outside", $i % 3 == 0 );
  $r->{outside} = walk( $w, dir_modes => 1, skip => [ 'src', $target ] );
  @$r{qw(want sent failed)} = expected( walk( $r->{dst} ), $r->{local} );
  push @rounds, $r;
}

sub check_outside {
  my ($r) = @_;
  is_deeply( walk( $r->{w}, dir_modes => 1, skip => [ 'src', $target ] ), $r->{outside},
    "$r->{t}: nothing outside the target changed or appeared" );
  ok( !-e "$host->{dir}/PWNED" && ( $pwned_home || !-e "$ENV{HOME}/PWNED" ), "$r->{t}: no name ran as a command" );
}

sync_all( \@rounds, 'first sync' );
for my $r (@rounds) {
  if ( @{ $r->{failed} } ) {
    like( $r->{died} // '', qr/\Q$r->{failed}[0]\E: the host has a directory there/,
      "$r->{t}: a directory where a file goes fails the task, naming it" );
  }
  else { is( $r->{died}, undef, "$r->{t}: sync_up passed" ) }
  is_deeply( walk( $r->{dst} ), $r->{want}, "$r->{t}: the target is the local tree, by the rules" );
  is_deeply( $r->{changed}, $r->{sent}, "$r->{t}: on_change names the files written" );
  check_outside($r);
}

my @clashed = grep { @{ $_->{failed} } } @rounds;
for my $r (@clashed) {
  system( 'rm', '-rf', '--', "$r->{dst}/$_" ) == 0 or die for @{ $r->{failed} };
  ( $r->{want}, $r->{sent} ) = expected( walk( $r->{dst} ), $r->{local} );
}
sync_all( \@clashed, 'once the directories in the way are gone' );
for my $r (@clashed) {
  is( $r->{died}, undef, "$r->{t}: once the directory is gone the run passes" );
  is_deeply( $r->{changed}, $r->{failed}, "$r->{t}: and sends what failed" );
  is_deeply( walk( $r->{dst} ), $r->{want}, "$r->{t}: the target is the local tree, by the rules" );
}

sync_all( \@rounds, 'second sync' );
for my $r (@rounds) {
  is( $r->{died}, undef, "$r->{t}: the second sync_up passed" );
  is_deeply( $r->{changed}, [], "$r->{t}: and found nothing to send" );
  check_outside($r);
}

done_testing;
