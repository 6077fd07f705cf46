//! Controller roles (1.3.5 §6.3.6, §7.3.9): equal, master and slave, and
//! the generation id that keeps a stale master from taking over.
//!
//! Every connection starts as `EQUAL`. A MASTER request demotes the
//! current master to SLAVE. MASTER and SLAVE requests carry a generation
//! id; one that is older than the last seen (compared as a signed 64-bit
//! distance, as the spec asks) is refused with `OFPRRFC_STALE`.

use crate::error::OfError;
use baton_openflow::v13::ControllerRole;
use std::collections::BTreeMap;

/// A controller connection's handle with the switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ControllerId(pub u32);

/// A controller's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Full access, receives asynchronous messages (the default).
    Equal,
    /// Full access; at most one.
    Master,
    /// Read-only; receives only port status by default.
    Slave,
}

impl Role {
    /// The wire value.
    pub fn wire(self) -> ControllerRole {
        match self {
            Role::Equal => ControllerRole::Equal,
            Role::Master => ControllerRole::Master,
            Role::Slave => ControllerRole::Slave,
        }
    }
}

/// The roles of the connected controllers.
#[derive(Debug, Clone, Default)]
pub struct Roles {
    roles: BTreeMap<ControllerId, Role>,
    generation: Option<u64>,
    next: u32,
}

impl Roles {
    /// A new controller, as EQUAL.
    pub fn register(&mut self) -> ControllerId {
        let id = ControllerId(self.next);
        self.next = self.next.wrapping_add(1);
        self.roles.insert(id, Role::Equal);
        id
    }

    /// A controller went away.
    pub fn unregister(&mut self, id: ControllerId) {
        self.roles.remove(&id);
    }

    /// Its role.
    pub fn role(&self, id: ControllerId) -> Role {
        self.roles.get(&id).copied().unwrap_or(Role::Equal)
    }

    /// The last generation id seen (0 before any).
    pub fn generation(&self) -> u64 {
        self.generation.unwrap_or(0)
    }

    /// Handles a ROLE_REQUEST; returns the role to report.
    pub fn request(
        &mut self,
        id: ControllerId,
        role: ControllerRole,
        generation_id: u64,
    ) -> Result<Role, OfError> {
        let new = match role {
            ControllerRole::NoChange => return Ok(self.role(id)),
            ControllerRole::Equal => Role::Equal,
            ControllerRole::Master => Role::Master,
            ControllerRole::Slave => Role::Slave,
            ControllerRole::Unknown(_) => return Err(OfError::BadRole),
        };
        if new != Role::Equal {
            if let Some(cur) = self.generation {
                if (generation_id.wrapping_sub(cur) as i64) < 0 {
                    return Err(OfError::RoleStale);
                }
            }
            self.generation = Some(generation_id);
        }
        if new == Role::Master {
            for (other, r) in self.roles.iter_mut() {
                if *other != id && *r == Role::Master {
                    *r = Role::Slave;
                }
            }
        }
        self.roles.insert(id, new);
        Ok(new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_master_and_stale_generations() {
        let mut r = Roles::default();
        let a = r.register();
        let b = r.register();
        assert_eq!(r.role(a), Role::Equal);
        assert_eq!(r.request(a, ControllerRole::Master, 5), Ok(Role::Master));
        assert_eq!(r.request(b, ControllerRole::Master, 6), Ok(Role::Master));
        assert_eq!(r.role(a), Role::Slave);
        assert_eq!(
            r.request(a, ControllerRole::Master, 4),
            Err(OfError::RoleStale)
        );
        assert_eq!(r.role(b), Role::Master);
        // Wrap-around: u64::MAX is "before" 6.
        assert_eq!(
            r.request(a, ControllerRole::Slave, u64::MAX),
            Err(OfError::RoleStale)
        );
        assert_eq!(r.request(a, ControllerRole::NoChange, 0), Ok(Role::Slave));
        assert_eq!(r.request(a, ControllerRole::Equal, 0), Ok(Role::Equal));
        assert_eq!(
            r.request(a, ControllerRole::Unknown(9), 0),
            Err(OfError::BadRole)
        );
        assert_eq!(r.generation(), 6);
    }
}
